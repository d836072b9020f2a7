package skilldir

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// TestReadDirSorted_ListsWhatFSReadDirLists: the listing built from raw
// directory entries gives the names, order and types os.Root's own listing
// gives, for every kind of entry a skill tree can hold.
func TestReadDirSorted_ListsWhatFSReadDirLists(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sub", ".hidden-dir"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	resourcestest.WriteTree(t, dir, map[string]string{"SKILL.md": "x", "b.txt": "x", ".gitignore": "x", "Z-upper.md": "x"})
	for link, target := range map[string]string{"to-sub": "sub", "broken": "missing", "away": "/etc/passwd"} {
		resourcestest.Symlink(t, target, filepath.Join(dir, link))
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()

	want, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readDirSorted(root, ".")
	if err != nil {
		t.Fatal(err)
	}
	describe := func(entries []fs.DirEntry) []string {
		var out []string
		for _, e := range entries {
			out = append(out, e.Name()+" "+e.Type().String())
		}
		return out
	}
	if !slices.Equal(describe(got), describe(want)) {
		t.Fatalf("readDirSorted lists %v,\nfs.ReadDir lists %v", describe(got), describe(want))
	}
	for _, e := range got {
		info, err := e.Info()
		if err != nil || info.Name() != e.Name() || info.Mode().Type() != e.Type() {
			t.Errorf("%s: Info() = %v, %v; want its own lstat", e.Name(), info, err)
		}
	}
	empty, err := readDirSorted(root, "sub")
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("empty directory: %v, %v; want an empty, non-nil list", empty, err)
	}
	if _, err := readDirSorted(root, "b.txt"); err == nil {
		t.Error("listing a regular file: no error")
	}
}
