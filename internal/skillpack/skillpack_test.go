package skillpack

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

func writeSkill(t *testing.T, dir string) {
	t.Helper()
	files := map[string]struct {
		data string
		mode os.FileMode
	}{
		"SKILL.md":           {"---\nname: docx\ndescription: Docs.\n---\nBody\n", 0o600},
		"scripts/pack.py":    {"#!/usr/bin/env python3\n", 0o775},
		"fonts/a.ttf":        {"\x00\x01\xff\xfe", 0o640},
		".git/config":        {"[core]", 0o644},
		"docs/.DS_Store":     {"x", 0o644},
		"docs/ref/deep.md":   {"deep", 0o644},
		"templates/empty.md": {"", 0o644},
	}
	for p, f := range files {
		resourcestest.WriteFile(t, filepath.Join(dir, filepath.FromSlash(p)), []byte(f.data), f.mode)
	}
}

// The layer, and so the artifact's digest (internal/ociskill), depends on
// the files' bytes and executable bits only.
func TestTar_SameDirectorySameBytesWhateverTimesAndUmask(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeSkill(t, a)
	writeSkill(t, b)
	_ = os.Chtimes(filepath.Join(b, "SKILL.md"), time.Unix(1e9, 0), time.Unix(1e9, 0))
	_ = os.Chmod(filepath.Join(b, "docs/ref/deep.md"), 0o664)
	if !bytes.Equal(mustTar(t, a), mustTar(t, b)) {
		t.Fatal("layers differ")
	}
	if err := os.WriteFile(filepath.Join(b, "fonts/a.ttf"), []byte("\x00\x01\xff\xfd"), 0o644); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(mustTar(t, b), mustTar(t, a)) {
		t.Fatal("a changed byte kept the layer")
	}
}

func TestTar_EntriesSortedZeroTimesOwnersAndModesKept(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir)
	tr := tar.NewReader(bytes.NewReader(mustTar(t, dir)))
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: header not zeroed: %+v", h.Name, h)
		}
		want := int64(0o644)
		if h.Name == "scripts/pack.py" {
			want = 0o755
		}
		if h.Mode != want {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
		}
	}
	if got := strings.Join(names, ","); got != "SKILL.md,docs/ref/deep.md,fonts/a.ttf,scripts/pack.py,templates/empty.md" {
		t.Fatalf("entries = %s (hidden entries must be left out, order sorted)", got)
	}
}

func TestReadDir_SymlinkLeavingTheSkillIsAnError(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeSkill(t, dir)
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	resourcestest.Symlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "leak.md"))
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "leak.md") {
		t.Fatalf("ReadDir with an escaping symlink: %v", err)
	}
	inside := t.TempDir()
	writeSkill(t, inside)
	resourcestest.Symlink(t, "docs/ref/deep.md", filepath.Join(inside, "alias.md"))
	tree := mustReadDir(t, inside)
	if f, ok := tree.File("alias.md"); !ok || string(f.Content) != "deep" {
		t.Fatalf("symlink inside the skill not followed: %+v", f)
	}
}

func TestUntar_RefusesUnsafeEntries(t *testing.T) {
	for name, hdr := range map[string]*tar.Header{
		"escaping":  {Name: "../x", Typeflag: tar.TypeReg},
		"absolute":  {Name: "/etc/x", Typeflag: tar.TypeReg},
		"symlink":   {Name: "a", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"hardlink":  {Name: "a", Typeflag: tar.TypeLink, Linkname: "b"},
		"not clean": {Name: "a/./b", Typeflag: tar.TypeReg},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		_ = tw.WriteHeader(hdr)
		_ = tw.Close()
		if _, err := Untar(&buf); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// mustReadDir reads the skill directory dir, which must be readable.
func mustReadDir(t *testing.T, dir string) Tree {
	t.Helper()
	tree, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// mustTar is the layer of the skill directory dir.
func mustTar(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := Tar(mustReadDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
