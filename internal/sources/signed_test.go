package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/sourcecache"
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
	art, err := ociskill.Pack(tree)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := ociskill.Push(context.Background(), art, r.host()+"/"+repo)
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
		if _, err := ociskill.PushReferrer(context.Background(), art, pinned.String(), sigcheck.BundleMediaType, bundle); err != nil {
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
	trust, err := sigcheck.ParseKeys(pub)
	if err != nil {
		t.Fatal(err)
	}
	// The process's --skill-signers, and a context that requires the same
	// key (contract.Registry.SkillSigners) on a fetcher with no flag: the
	// same verdicts.
	byFlag := New(Options{CacheDir: t.TempDir(), Signers: trust})
	byContext := New(Options{CacheDir: t.TempDir()}).Requiring([]contract.SignerRequirement{
		{DeclaredBy: "platform-system/release-signers", Authority: contract.AuthorityPlatform, PublicKeys: []string{string(pub)}}})
	for name, f := range map[string]*sourcecache.Fetcher{"flag": byFlag.Fetcher, "context": byContext} {
		t.Run(name, func(t *testing.T) { requiredSignatureBySignerOnly(t, f, reg, dir, release, other) })
	}

	// Without Signers nothing changes: the unsigned skill loads.
	if _, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), reg.pushSigned(t, filepath.Join(dir, "xlsx"), "skills/xlsx2", nil, nil)); err != nil {
		t.Fatal(err)
	}
}

func requiredSignatureBySignerOnly(t *testing.T, f *sourcecache.Fetcher, reg *testRegistry, dir string, release, other *skillsig.Signer) {
	t.Helper()

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
		art, _ := ociskill.Pack(tree)
		return art.Manifest
	}()
	for name, c := range map[string]struct {
		src    contract.SkillSource
		skill  string
		reason string
	}{
		"unsigned":      {reg.pushSigned(t, filepath.Join(dir, "xlsx"), "skills/xlsx", nil, nil), "xlsx", sigcheck.ReasonUnsigned},
		"another key":   {reg.pushSigned(t, filepath.Join(dir, "docx"), "skills/docx", other, nil), "docx", sigcheck.ReasonUntrustedSigner},
		"changed bytes": {reg.pushSigned(t, filepath.Join(dir, "brand-guidelines"), "skills/brand", release, signedManifest), "brand-guidelines", sigcheck.ReasonDigestMismatch},
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
			art, _ := ociskill.Pack(tree)
			layer, _ := skillpack.LayerOf(art.Manifest)
			if _, err := os.Stat(filepath.Join(f.Dir(), "blobs", "sha256", layer.Hex())); err == nil {
				t.Error("the refused skill's layer was fetched")
			}
		})
	}
}

// The platform requires its release key and the tenant adds its own: a
// skill signed by the release key alone is refused (the tenant's
// requirement is not met), one signed by both loads, and the refusal names
// the declaration it failed. A process flag adds to the context's
// requirements, never replaces them. Requirements that do not parse refuse
// every source, git included, saying why (fail closed).
func TestRequiring_EveryDeclarationAndTheFlagMustBeMet(t *testing.T) {
	reg := newTestRegistry(t)
	dir := t.TempDir()
	packtest.Write(t, dir)
	release, _ := skillsig.GenerateSigner()
	team, _ := skillsig.GenerateSigner()
	relPub, _ := release.PublicKeyPEM()
	teamPub, _ := team.PublicKeyPEM()
	reqs := []contract.SignerRequirement{
		{DeclaredBy: "platform-system/release-signers", Authority: contract.AuthorityPlatform, PublicKeys: []string{string(relPub)}},
		{DeclaredBy: "Workspace team-a/dev", Authority: contract.AuthorityProject, PublicKeys: []string{string(teamPub)}},
	}
	f := New(Options{CacheDir: t.TempDir()}).Requiring(reqs)
	byRelease := reg.pushSigned(t, filepath.Join(dir, "pdf"), "skills/pdf", release, nil)
	_, err := f.Fetch(context.Background(), byRelease)
	if err == nil || !strings.Contains(Reason(err), "UntrustedSigner") || !strings.Contains(Reason(err), "required by Workspace team-a/dev") {
		t.Fatalf("the release key alone: %v (reason %q)", err, Reason(err))
	}
	both := reg.pushSigned(t, filepath.Join(dir, "docx"), "skills/docx", release, nil)
	tree, _ := skillpack.ReadDir(filepath.Join(dir, "docx"))
	art, _ := ociskill.Pack(tree)
	bundle, _ := team.Sign(art.Manifest)
	if _, err := ociskill.PushReferrer(context.Background(), art, both.OCI.Reference, sigcheck.BundleMediaType, bundle); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(context.Background(), both); err != nil {
		t.Fatalf("signed by both: %v", err)
	}
	// A flag trusting only the team key cannot stand in for the platform's.
	teamOnly, _ := sigcheck.ParseKeys(teamPub)
	flagged := New(Options{CacheDir: t.TempDir(), Signers: teamOnly}).Requiring(reqs[:1])
	byTeam := reg.pushSigned(t, filepath.Join(dir, "xlsx"), "skills/xlsx", team, nil)
	if _, err := flagged.Fetch(context.Background(), byTeam); err == nil || !strings.Contains(Reason(err), "required by platform-system/release-signers") {
		t.Fatalf("the flag's key alone: %v", err)
	}
	broken := New(Options{CacheDir: t.TempDir()}).Requiring([]contract.SignerRequirement{{DeclaredBy: "x/y", PublicKeys: []string{"garbage"}}})
	for _, src := range []contract.SkillSource{both, {Git: &contract.GitSource{URL: "https://example.com/s.git", Commit: strings.Repeat("a", 40)}}} {
		if _, err := broken.Fetch(context.Background(), src); err == nil || !strings.Contains(Reason(err), "signer requirements cannot be read") {
			t.Fatalf("unreadable requirements, %s: %v (%q)", src, err, Reason(err))
		}
	}
	if _, err := New(Options{CacheDir: t.TempDir()}).Requiring(nil).Fetch(context.Background(), byTeam); err != nil {
		t.Fatalf("no requirement: %v", err)
	}
}
