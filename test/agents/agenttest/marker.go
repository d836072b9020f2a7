package agenttest

import (
	"os"
	"path/filepath"
	"testing"
)

// BuildMarker makes dir/build/MARKER, which a recursive delete of build
// would remove, and returns its path.
func BuildMarker(t testing.TB, dir string) string {
	t.Helper()
	marker := filepath.Join(dir, "build", "MARKER")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}
