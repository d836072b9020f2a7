package skilldir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestReadBounded_ReadsAsOfTheStatAndNeverPastTheBound: a file is read up to
// the size its fstat gave (a file grown since is read as of the fstat, one
// shrunk to its end), a file whose fstat says 0 bytes is read to its end,
// and nothing is read past maxRootFileBytes.
func TestReadBounded_ReadsAsOfTheStatAndNeverPastTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	content := strings.Repeat("0123456789", 100)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int64
		want string
	}{
		{"unchanged", int64(len(content)), content},
		{"grown since the fstat", 10, content[:10]},
		{"shrunk since the fstat", int64(len(content)) + 500, content},
		{"fstat says 0 bytes", 0, content},
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBounded(f, tc.size)
		_ = f.Close()
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: read %d bytes, %v; want %d", tc.name, len(got), err, len(tc.want))
		}
	}

	big := testenv.TempFile(t, "big", make([]byte, maxRootFileBytes+1), 0o644)
	f, err := os.Open(big)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if b, err := readBounded(f, 0); !errors.Is(err, errTooLarge) {
		t.Errorf("a file over the bound whose fstat says 0 bytes: read %d bytes, %v; want errTooLarge", len(b), err)
	}
}
