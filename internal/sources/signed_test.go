package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/skillsig"
)

// pushSigned packs dir, pushes it as repo and attaches signer's bundle
// over manifest (the artifact's own when nil), as `loadout push --sign-key`
// does; it returns the pinned source.
func (r *testRegistry) pushSigned(t *testing.T, dir, repo string, signer *skillsig.Signer, manifest []byte) contract.SkillSource {
	t.Helper()
	tree, err := skillpack.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	art, err := skillpack.Pack(tree)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := skillpack.Push(context.Background(), art, r.host()+"/"+repo)
	if err != nil {
		t.Fatal(err)
	}
	if signer != nil {
		if manifest == nil {
			manifest = art.Manifest
		}
		bundle, err := signer.Sign(manifest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := skillpack.PushReferrer(context.Background(), art, pinned.String(), skillsig.BundleMediaType, bundle); err != nil {
			t.Fatal(err)
		}
	}
	return contract.SkillSource{OCI: &contract.OCISource{Reference: pinned.String()}}
}

// A namespace that requires signatures by its release key: a correctly
// signed skill loads; an unsigned one, one signed by another key, one
// carrying the signature of other bytes (the artifact changed after
// signing) and a git skill are refused, each with its reason, before the
// skill's layer is fetched.
func TestFetch_RequiredSignatureBySignerOnly(t *testing.T) {
	reg := newTestRegistry(t)
	dir := t.TempDir()
	packtest.Write(t, dir)
	release, _ := skillsig.GenerateSigner()
	other, _ := skillsig.GenerateSigner()
	pub, _ := release.PublicKeyPEM()
	trust, err := skillsig.ParseTrust(pub)
	if err != nil {
		t.Fatal(err)
	}
	f := New(Options{CacheDir: t.TempDir(), Signers: trust})

	signed := reg.pushSigned(t, filepath.Join(dir, "pdf"), "skills/pdf", release, nil)
	tree, err := f.Fetch(context.Background(), signed)
	if err != nil {
		t.Fatalf("correctly signed: %v", err)
	}
	if _, ok := tree.File("SKILL.md"); !ok {
		t.Fatal("no SKILL.md")
	}
	// Later fetches verify the cached bundle offline: no registry request.
	before := reg.requests.Load()
	if _, err := f.Fetch(context.Background(), signed); err != nil || reg.requests.Load() != before {
		t.Fatalf("second fetch: %v, %d requests", err, reg.requests.Load()-before)
	}

	signedManifest := func() []byte {
		tree, _ := skillpack.ReadDir(filepath.Join(dir, "pdf"))
		art, _ := skillpack.Pack(tree)
		return art.Manifest
	}()
	for name, c := range map[string]struct {
		src    contract.SkillSource
		skill  string
		reason string
	}{
		"unsigned":      {reg.pushSigned(t, filepath.Join(dir, "xlsx"), "skills/xlsx", nil, nil), "xlsx", skillsig.ReasonUnsigned},
		"another key":   {reg.pushSigned(t, filepath.Join(dir, "docx"), "skills/docx", other, nil), "docx", skillsig.ReasonUntrustedSigner},
		"changed bytes": {reg.pushSigned(t, filepath.Join(dir, "brand-guidelines"), "skills/brand", release, signedManifest), "brand-guidelines", skillsig.ReasonDigestMismatch},
		"git":           {contract.SkillSource{Git: &contract.GitSource{URL: "https://example.com/skills.git", Commit: strings.Repeat("a", 40)}}, "", "only signed OCI skills"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), c.src)
			if err == nil || !strings.Contains(Reason(err), c.reason) {
				t.Fatalf("err = %v (reason %q), want %s", err, Reason(err), c.reason)
			}
			if c.skill == "" {
				return
			}
			tree, _ := skillpack.ReadDir(filepath.Join(dir, c.skill))
			art, _ := skillpack.Pack(tree)
			layer, _ := skillpack.LayerOf(art.Manifest)
			if _, err := os.Stat(filepath.Join(f.opts.CacheDir, "blobs", "sha256", layer.Digest.Hex)); err == nil {
				t.Error("the refused skill's layer was fetched")
			}
		})
	}

	// Without Signers nothing changes: the unsigned skill loads.
	if _, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), reg.pushSigned(t, filepath.Join(dir, "xlsx"), "skills/xlsx2", nil, nil)); err != nil {
		t.Fatal(err)
	}
}
