package skillsig_test

import (
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/skillsig/skillsigtest"
)

// A namespace that trusts the release workflow's identity under its
// trusted root: the workflow's keyless signature verifies offline; another
// workflow, the right subject from another issuer, a signature by another
// Sigstore's authority and an artifact changed after signing are refused,
// each with its reason.
func TestKeyless_OnlyTheTrustedIdentityUnderTheTrustedRoot(t *testing.T) {
	ss := skillsigtest.New(t)
	trustedRoot := ss.TrustedRoot
	manifest := []byte(`{"schemaVersion":2,"artifactType":"application/vnd.loadout.skill.v1"}`)
	digest := digestOf(manifest)
	v, err := skillsig.Keyless([]contract.SignerIdentity{{Issuer: skillsigtest.ActionsIssuer, Subject: skillsigtest.ReleaseIdentity}}, trustedRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(digest, [][]byte{ss.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, manifest)}); err != nil {
		t.Fatalf("the release workflow's signature: %v", err)
	}
	stranger := skillsigtest.New(t)
	changed := append([]byte(nil), manifest...)
	changed[len(changed)-2] = 'X'
	for name, c := range map[string]struct {
		digest string
		bundle []byte
		reason string
	}{
		"another workflow":  {digest, ss.Sign(t, "https://github.com/acme/skills/.github/workflows/pr.yml@refs/pull/1", skillsigtest.ActionsIssuer, manifest), sigcheck.ReasonUntrustedSigner},
		"another issuer":    {digest, ss.Sign(t, skillsigtest.ReleaseIdentity, "https://accounts.example.com", manifest), sigcheck.ReasonUntrustedSigner},
		"another authority": {digest, stranger.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, manifest), sigcheck.ReasonUntrustedSigner},
		"changed bytes":     {digestOf(changed), ss.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, manifest), sigcheck.ReasonDigestMismatch},
		"unsigned":          {digest, nil, sigcheck.ReasonUnsigned},
		"a key, not a cert": {digest, keySigned(t, manifest), sigcheck.ReasonInvalidBundle},
	} {
		var bundles [][]byte
		if c.bundle != nil {
			bundles = [][]byte{c.bundle}
		}
		if err := v.Verify(c.digest, bundles); reasonOf(err) != c.reason {
			t.Errorf("%s: %v, want reason %s", name, err, c.reason)
		}
	}
	if _, err := skillsig.Keyless([]contract.SignerIdentity{{Issuer: skillsigtest.ActionsIssuer, Subject: skillsigtest.ReleaseIdentity}}, "{}"); err == nil {
		t.Error("an empty trusted root accepted")
	}
}

func keySigned(t *testing.T, manifest []byte) []byte {
	t.Helper()
	s, _ := skillsig.GenerateSigner()
	b, err := s.Sign(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A context's requirement naming the release workflow's identity: the full
// CLI (sigcheck.Keyless set) accepts the workflow's keyless signature;
// the lean sidecar (Keyless unset) refuses it as KeylessUnsupported, never
// loading it unchecked, while it still verifies a requirement's keys.
func TestRequired_KeylessVerifiedByTheCLIRefusedBySidecar(t *testing.T) {
	ss := skillsigtest.New(t)
	trustedRoot := ss.TrustedRoot
	manifest := []byte(`{"schemaVersion":2}`)
	digest := digestOf(manifest)
	release, _ := skillsig.GenerateSigner()
	pub, _ := release.PublicKeyPEM()
	byKey, _ := release.Sign(manifest)
	byWorkflow := ss.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, manifest)
	reqs := []contract.SignerRequirement{{DeclaredBy: "loadout-system/release-signers", Authority: contract.AuthorityPlatform,
		PublicKeys: []string{string(pub)}, Identities: []contract.SignerIdentity{{Issuer: skillsigtest.ActionsIssuer, Subject: skillsigtest.ReleaseIdentity}}, TrustedRoot: trustedRoot}}

	was := sigcheck.Keyless
	t.Cleanup(func() { sigcheck.Keyless = was })
	sigcheck.Keyless = nil // the sidecar
	v, err := sigcheck.Required(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(digest, [][]byte{byWorkflow}); reasonOf(err) != sigcheck.ReasonKeylessUnsupported {
		t.Errorf("sidecar, keyless bundle: %v, want KeylessUnsupported", err)
	}
	if err := v.Verify(digest, [][]byte{byKey}); err != nil {
		t.Errorf("sidecar, key-signed bundle: %v", err)
	}

	sigcheck.Keyless = skillsig.Keyless // the full CLI
	v, err = sigcheck.Required(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"keyless": byWorkflow, "key": byKey} {
		if err := v.Verify(digest, [][]byte{b}); err != nil {
			t.Errorf("CLI, %s bundle: %v", name, err)
		}
	}
	other := ss.Sign(t, "https://github.com/acme/skills/.github/workflows/pr.yml@refs/pull/1", skillsigtest.ActionsIssuer, manifest)
	if err := v.Verify(digest, [][]byte{other}); reasonOf(err) != sigcheck.ReasonUntrustedSigner {
		t.Errorf("CLI, another workflow: %v", err)
	}
	reqs[0].TrustedRoot = "{}"
	if _, err := sigcheck.Required(reqs); err == nil {
		t.Error("an unreadable trusted root accepted")
	}
}

// BenchmarkVerify_Keyless is the cost of verifying one keyless bundle
// (certificate chain, signed timestamp, identity, signature) with a
// verifier made once per context, as a fetch does.
func BenchmarkVerify_Keyless(b *testing.B) {
	ss := skillsigtest.New(b)
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.loadout.skill.v1"}`)
	bundle := ss.Sign(b, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, manifest)
	v, err := skillsig.Keyless([]contract.SignerIdentity{{Issuer: skillsigtest.ActionsIssuer, Subject: skillsigtest.ReleaseIdentity}}, ss.TrustedRoot)
	if err != nil {
		b.Fatal(err)
	}
	digest := digestOf(manifest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := v.Verify(digest, [][]byte{bundle}); err != nil {
			b.Fatal(err)
		}
	}
}
