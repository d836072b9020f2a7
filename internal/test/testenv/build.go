package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// GoBuild builds the repository's main package pkg (such as ./cmd/loadout)
// into dir as `make build` does, without cgo, and returns the binary's path.
func GoBuild(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin, err := goBuild(dir, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func goBuild(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, path.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Binary is a main package of the repository that the tests of one process
// share: built the first time a test asks for it, into a temporary directory
// that Remove deletes.
type Binary struct {
	// Package is the main package, such as ./cmd/manager.
	Package string
	// Env, if set, names a variable that, when not empty, is the path of
	// the binary to use instead (make builds bin/ and sets it).
	Env string

	once      sync.Once
	dir, path string
	err       error
}

// Path returns the binary: $Env when set, else the one built on the first
// call.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	if b.Env != "" {
		if bin := os.Getenv(b.Env); bin != "" {
			return bin
		}
	}
	b.once.Do(func() {
		// Built once for every test of the process: a t.TempDir would go
		// with the first test that asked.
		if b.dir, b.err = os.MkdirTemp("", "loadout-test-bin-"); b.err == nil { //nolint:usetesting // see above
			b.path, b.err = goBuild(b.dir, b.Package)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the binary, if it was built; call it from TestMain after
// m.Run.
func (b *Binary) Remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
