package hostd

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/skillsig/skillsigtest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// pushSigned pushes tree as skills/name and, with a signer, attaches its
// bundle over manifest (the artifact's own when nil), as `loadout push
// --sign-key` does; it returns the pinned reference.
func pushSigned(t *testing.T, host, name string, tree skillpack.Tree, signer *skillsig.Signer, manifest []byte) string {
	t.Helper()
	if signer == nil {
		return pushBundled(t, host, name, tree, nil)
	}
	return pushBundled(t, host, name, tree, func(own []byte) []byte {
		if manifest == nil {
			manifest = own
		}
		bundle, err := signer.Sign(manifest)
		if err != nil {
			t.Fatal(err)
		}
		return bundle
	})
}

// pushBundled pushes tree as skills/name and, with sign, attaches the
// bundle sign makes of the artifact's manifest.
func pushBundled(t *testing.T, host, name string, tree skillpack.Tree, sign func(manifest []byte) []byte) string {
	t.Helper()
	art, err := ociskill.Pack(tree)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := ociskill.Push(context.Background(), art, host+"/skills/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if sign != nil {
		if _, err := ociskill.PushReferrer(context.Background(), art, pinned.String(), sigcheck.BundleMediaType, sign(art.Manifest)); err != nil {
			t.Fatal(err)
		}
	}
	return pinned.String()
}

func pdfTree(body string) skillpack.Tree {
	return skillpack.Tree{{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: []byte("---\nname: pdf\ndescription: Reads PDFs.\n---\n" + body + "\n")}}
}

// readyzSources is /readyz's skill source statuses.
func readyzSources(t *testing.T, s *Server) []SourceStatus {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/readyz", nil))
	var body struct {
		SkillSources []SourceStatus `json:"skillSources"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/readyz %s: %v", rec.Body, err)
	}
	return body.SkillSources
}

// A context whose platform requires its release key (Registry.SkillSigners,
// as the manager publishes it) is enforced by hostd with no flag of its
// own, as the lean sidecar runs: the correctly signed skill is served; an
// unsigned one, one signed by another key and one whose bytes changed
// after signing are refused with their reasons on /readyz and serve
// nothing. And a skill served while nothing required signatures is dropped
// the moment the context requires them, not kept as the "previous
// version".
func TestSkillSignatures_TheContextsSignersAreEnforcedBySidecar(t *testing.T) {
	host := testnet.Registry(t)
	release, _ := skillsig.GenerateSigner()
	other, _ := skillsig.GenerateSigner()
	pub, _ := release.PublicKeyPEM()
	requires := contract.Registry{SkillSigners: []contract.SignerRequirement{{DeclaredBy: "platform-system/release-signers",
		Authority: contract.AuthorityPlatform, PublicKeys: []string{string(pub)}}}}
	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	write := func(reg contract.Registry, ref string) {
		resourcestest.WriteTree(t, ctxDir, externalSkillContextIn(t, reg, "pdf", "Reads PDFs.", &contract.SkillSource{OCI: &contract.OCISource{Reference: ref}}))
	}
	s := New(Options{ContextDir: ctxDir, MaterializeDir: out, SkillSources: cachedSources(t), Logger: quietLogger()})
	t.Cleanup(s.wait)
	reload := func() {
		t.Helper()
		if err := s.Reload(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		s.wait()
	}
	served := func() string {
		b, _ := os.ReadFile(filepath.Join(out, "skills", "pdf", "SKILL.md"))
		return string(b)
	}

	// Unsigned and nothing required: served.
	unsigned := pushSigned(t, host, "pdf-unsigned", pdfTree("UNSIGNED-BODY"), nil, nil)
	write(contract.Registry{}, unsigned)
	reload()
	if !strings.Contains(served(), "UNSIGNED-BODY") {
		t.Fatalf("no requirement, unsigned skill not served: %q", served())
	}
	// The platform starts requiring its key: the unsigned version goes.
	write(requires, unsigned)
	reload()
	if got := served(); got != "" {
		t.Fatalf("an unsigned skill is still served after signatures became required: %q", got)
	}
	if st := readyzSources(t, s); len(st) != 1 || st[0].Serving != "nothing" || !strings.Contains(st[0].Reason, "Unsigned") ||
		!strings.Contains(st[0].Reason, "platform-system/release-signers") {
		t.Fatalf("/readyz = %+v", st)
	}

	signedTree := pdfTree("SIGNED-BODY")
	art, _ := ociskill.Pack(signedTree)
	for name, c := range map[string]struct {
		ref    string
		reason string
	}{
		"another key":   {pushSigned(t, host, "pdf-other", pdfTree("OTHER-BODY"), other, nil), "UntrustedSigner"},
		"changed bytes": {pushSigned(t, host, "pdf-changed", pdfTree("CHANGED-BODY"), release, art.Manifest), "DigestMismatch"},
	} {
		write(requires, c.ref)
		reload()
		if got := served(); got != "" {
			t.Errorf("%s: served %q", name, got)
		}
		if st := readyzSources(t, s); len(st) != 1 || st[0].State != "failing" || !strings.Contains(st[0].Reason, c.reason) {
			t.Errorf("%s: /readyz = %+v, want failing with %s", name, st, c.reason)
		}
	}

	write(requires, pushSigned(t, host, "pdf", signedTree, release, nil))
	reload()
	if !strings.Contains(served(), "SIGNED-BODY") {
		t.Fatalf("the correctly signed skill is not served: %q", served())
	}
	if st := readyzSources(t, s); len(st) != 0 {
		t.Fatalf("/readyz = %+v, want no failing source", st)
	}
}

// A context whose platform trusts a release workflow's keyless identity:
// the lean sidecar (hostd without sigstore's libraries, sigcheck.Keyless
// unset) cannot verify a certificate, so it refuses the workflow's
// signed skill with KeylessUnsupported and serves nothing, never loading it
// unchecked; a skill signed by the same requirement's key still loads.
func TestSkillSignatures_SidecarFailsClosedOnIdentitiesItCannotVerify(t *testing.T) {
	host := testnet.Registry(t)
	ss := skillsigtest.New(t)
	release, _ := skillsig.GenerateSigner()
	pub, _ := release.PublicKeyPEM()
	requires := contract.Registry{SkillSigners: []contract.SignerRequirement{{DeclaredBy: "platform-system/release-signers",
		Authority: contract.AuthorityPlatform, PublicKeys: []string{string(pub)},
		Identities:  []contract.SignerIdentity{{Issuer: skillsigtest.ActionsIssuer, Subject: skillsigtest.ReleaseIdentity}},
		TrustedRoot: ss.TrustedRoot}}}
	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	s := New(Options{ContextDir: ctxDir, MaterializeDir: out, SkillSources: cachedSources(t), Logger: quietLogger()})
	t.Cleanup(s.wait)
	load := func(ref string) string {
		t.Helper()
		resourcestest.WriteTree(t, ctxDir, externalSkillContextIn(t, requires, "pdf", "Reads PDFs.", &contract.SkillSource{OCI: &contract.OCISource{Reference: ref}}))
		if err := s.Reload(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		s.wait()
		b, _ := os.ReadFile(filepath.Join(out, "skills", "pdf", "SKILL.md"))
		return string(b)
	}
	keyless := pushBundled(t, host, "pdf-keyless", pdfTree("KEYLESS-BODY"), func(m []byte) []byte {
		return ss.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, m)
	})
	if got := load(keyless); got != "" {
		t.Fatalf("the sidecar served a skill only an identity it cannot verify would accept: %q", got)
	}
	if st := readyzSources(t, s); len(st) != 1 || !strings.Contains(st[0].Reason, "KeylessUnsupported") || st[0].Serving != "nothing" {
		t.Fatalf("/readyz = %+v, want KeylessUnsupported", st)
	}
	if got := load(pushSigned(t, host, "pdf-key", pdfTree("KEY-BODY"), release, nil)); !strings.Contains(got, "KEY-BODY") {
		t.Fatalf("the requirement's key no longer verifies in the sidecar: %q", got)
	}
}
