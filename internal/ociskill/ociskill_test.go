package ociskill_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// TestPush_InProcessRegistryServesTheSameBytes pushes to an in-process
// registry and reads the manifest and layer back by digest.
func TestPush_InProcessRegistryServesTheSameBytes(t *testing.T) {
	host := testnet.Registry(t)
	dir := filepath.Join(t.TempDir(), "docx")
	packtest.Write(t, filepath.Dir(dir))
	art, err := ociskill.Pack(mustReadDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	again, err := ociskill.Pack(mustReadDir(t, dir))
	if err != nil || again.Digest != art.Digest {
		t.Fatalf("the same tree packed twice: %s and %s (%v)", art.Digest, again.Digest, err)
	}
	ref, err := ociskill.Push(context.Background(), art, host+"/skills/docx:latest")
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
	if !bytes.Equal(desc.Manifest, art.Manifest) || desc.ArtifactType != skillpack.ArtifactType {
		t.Fatalf("manifest served differs: %s", desc.Manifest)
	}
	l, err := skillpack.LayerOf(desc.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := remote.Layer(ref.Context().Digest(l.Digest))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tree, err := skillpack.Untar(rc)
	if err != nil {
		t.Fatal(err)
	}
	want := mustReadDir(t, dir)
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

func mustReadDir(t *testing.T, dir string) skillpack.Tree {
	t.Helper()
	tree, err := skillpack.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
