package sigcheck_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillsig"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func requirement(t *testing.T, by string, signers ...*skillsig.Signer) contract.SignerRequirement {
	t.Helper()
	r := contract.SignerRequirement{DeclaredBy: by, Authority: contract.AuthorityPlatform}
	for _, s := range signers {
		p, err := s.PublicKeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		r.PublicKeys = append(r.PublicKeys, string(p))
	}
	return r
}

func reasonOf(err error) string {
	var e *sigcheck.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// The platform requires its release key and the tenant adds its own: an
// artifact signed by the tenant's key alone does not meet the platform's
// requirement (a tenant cannot drop it), one signed by the release key
// alone does not meet the tenant's, and one signed by both loads. The
// refusal names the declaration it failed.
func TestRequired_EveryRequirementMustBeMet(t *testing.T) {
	release, _ := skillsig.GenerateSigner()
	team, _ := skillsig.GenerateSigner()
	manifest := []byte(`{"schemaVersion":2}`)
	digest := digestOf(manifest)
	byRelease, _ := release.Sign(manifest)
	byTeam, _ := team.Sign(manifest)
	v, err := sigcheck.Required([]contract.SignerRequirement{
		requirement(t, "platform-system/release-signers", release),
		requirement(t, "Workspace team-a/review", team),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(digest, [][]byte{byTeam}); reasonOf(err) != sigcheck.ReasonUntrustedSigner || !strings.Contains(err.Error(), "platform-system/release-signers") {
		t.Errorf("tenant's key alone: %v", err)
	}
	if err := v.Verify(digest, [][]byte{byRelease}); reasonOf(err) != sigcheck.ReasonUntrustedSigner || !strings.Contains(err.Error(), "Workspace team-a/review") {
		t.Errorf("platform's key alone: %v", err)
	}
	if err := v.Verify(digest, [][]byte{byRelease, byTeam}); err != nil {
		t.Errorf("both: %v", err)
	}
	if v, err := sigcheck.Required(nil); v != nil || err != nil {
		t.Errorf("no requirement: %v, %v", v, err)
	}
	if _, err := sigcheck.Required([]contract.SignerRequirement{{DeclaredBy: "x/y", PublicKeys: []string{"not a key"}}}); err == nil || !strings.Contains(err.Error(), "x/y") {
		t.Errorf("a requirement that does not parse: %v", err)
	}
}

// Bundles of another shape than a key's message signature are refused, not
// half-checked: a DSSE envelope, a certificate instead of a key, another
// digest algorithm, an unknown media type, an oversized bundle.
func TestKeys_OtherBundleShapesAreRefused(t *testing.T) {
	release, _ := skillsig.GenerateSigner()
	pub, _ := release.PublicKeyPEM()
	keys, err := sigcheck.ParseKeys(pub)
	if err != nil {
		t.Fatal(err)
	}
	manifest := []byte(`{"schemaVersion":2}`)
	good, _ := release.Sign(manifest)
	for name, raw := range map[string]string{
		"dsse":        strings.Replace(string(good), `"messageSignature"`, `"dsseEnvelope":{},"x"`, 1),
		"certificate": strings.Replace(string(good), `"publicKey"`, `"certificate":{"rawBytes":"AA=="},"x"`, 1),
		"sha512":      strings.Replace(string(good), `"SHA2_256"`, `"SHA2_512"`, 1),
		"media type":  strings.Replace(string(good), `v0.3`, `v9`, 1),
		"oversized":   string(good) + strings.Repeat(" ", sigcheck.MaxBundleBytes),
	} {
		if raw == string(good) {
			t.Fatalf("%s: the bundle was not changed: %s", name, good)
		}
		if err := keys.Verify(digestOf(manifest), [][]byte{[]byte(raw)}); reasonOf(err) != sigcheck.ReasonInvalidBundle {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := keys.Verify("sha256:abc", [][]byte{good}); reasonOf(err) != sigcheck.ReasonInvalidBundle {
		t.Errorf("bad digest: %v", err)
	}
}

// An Ed25519 key is refused when the keys are read, saying why: its
// Sigstore message signature signs the artifact's bytes, not the digest an
// OCI reference pins.
func TestParseKeys_Ed25519IsRefusedWithTheReason(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	_, err := sigcheck.ParseKeys(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err == nil || !strings.Contains(err.Error(), "ECDSA") {
		t.Fatalf("ed25519: %v", err)
	}
	s, _ := skillsig.GenerateSigner()
	p, _ := s.PublicKeyPEM()
	if _, err := sigcheck.ParseKeys(append(p, "trailing"...)); err == nil {
		t.Error("text after the key accepted")
	}
	keys, err := sigcheck.ParseKeys(p, p)
	if err != nil || len(keys.IDs()) != 1 {
		t.Errorf("the same key twice: %v %v", keys, err)
	}
}
