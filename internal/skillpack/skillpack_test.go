package skillpack

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
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

func TestPack_SameDirectorySameDigestWhateverTimesAndUmask(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeSkill(t, a)
	writeSkill(t, b)
	_ = os.Chtimes(filepath.Join(b, "SKILL.md"), time.Unix(1e9, 0), time.Unix(1e9, 0))
	_ = os.Chmod(filepath.Join(b, "docs/ref/deep.md"), 0o664)
	pa, pb := mustPack(t, a), mustPack(t, b)
	if pa.Digest != pb.Digest || !bytes.Equal(pa.Layer, pb.Layer) {
		t.Fatalf("digests differ: %s vs %s", pa.Digest, pb.Digest)
	}
	if err := os.WriteFile(filepath.Join(b, "fonts/a.ttf"), []byte("\x00\x01\xff\xfd"), 0o644); err != nil {
		t.Fatal(err)
	}
	if mustPack(t, b).Digest == pa.Digest {
		t.Fatal("a changed byte kept the digest")
	}
}

func TestTar_EntriesSortedZeroTimesOwnersAndModesKept(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir)
	tr := tar.NewReader(bytes.NewReader(mustPack(t, dir).Layer))
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

// TestPush_InProcessRegistryServesTheSameBytes pushes to an in-process
// registry and reads the manifest and layer back by digest.
func TestPush_InProcessRegistryServesTheSameBytes(t *testing.T) {
	host := testnet.Registry(t)
	dir := t.TempDir()
	writeSkill(t, dir)
	art := mustPack(t, dir)
	ref, err := Push(context.Background(), art, host+"/skills/docx:latest")
	if err != nil {
		t.Fatal(err)
	}
	if ref.String() != host+"/skills/docx@"+art.Digest {
		t.Fatalf("pinned reference = %s", ref)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(desc.Manifest, art.Manifest) || desc.ArtifactType != ArtifactType {
		t.Fatalf("manifest served differs: %s", desc.Manifest)
	}
	l, err := LayerOf(desc.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := remote.Layer(ref.Context().Digest(l.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tree, err := Untar(rc)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ReadDir(dir)
	if len(tree) != len(want) {
		t.Fatalf("round trip: %d files, want %d", len(tree), len(want))
	}
	for i := range want {
		if tree[i].Path != want[i].Path || tree[i].Mode != want[i].Mode || !bytes.Equal(tree[i].Content, want[i].Content) {
			t.Errorf("round trip: %s differs", want[i].Path)
		}
	}
	if _, err := name.NewDigest(ref.String()); err != nil {
		t.Fatal(err)
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

func mustPack(t *testing.T, dir string) *Artifact {
	t.Helper()
	a, err := Pack(mustReadDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return a
}
