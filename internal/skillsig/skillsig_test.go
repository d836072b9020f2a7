package skillsig_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/loadout-dev/loadout/internal/skillsig"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func trustOf(t testing.TB, signers ...*skillsig.Signer) *skillsig.Trust {
	t.Helper()
	var pems [][]byte
	for _, s := range signers {
		p, err := s.PublicKeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		pems = append(pems, p)
	}
	trust, err := skillsig.ParseTrust(pems...)
	if err != nil {
		t.Fatal(err)
	}
	return trust
}

func reasonOf(err error) string {
	var e *skillsig.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// A namespace that trusts one key: the artifact it signed verifies; an
// unsigned one, one signed by another key, and one whose bytes changed
// after signing are refused, each with its reason.
func TestVerify_OnlyTheTrustedKeysSignatureOverTheseBytes(t *testing.T) {
	release, err := skillsig.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := skillsig.GenerateSigner()
	trust := trustOf(t, release)
	manifest := []byte(`{"schemaVersion":2,"artifactType":"application/vnd.loadout.skill.v1"}`)
	digest := digestOf(manifest)
	good, err := release.Sign(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := trust.Verify(digest, [][]byte{good}); err != nil {
		t.Fatalf("correctly signed: %v", err)
	}
	if err := trust.Verify(digest, nil); reasonOf(err) != skillsig.ReasonUnsigned {
		t.Fatalf("unsigned: %v", err)
	}
	byOther, _ := other.Sign(manifest)
	if err := trust.Verify(digest, [][]byte{byOther}); reasonOf(err) != skillsig.ReasonUntrustedSigner {
		t.Fatalf("another key: %v", err)
	}
	changed := append([]byte(nil), manifest...)
	changed[len(changed)-2] = 'X'
	if err := trust.Verify(digestOf(changed), [][]byte{good}); reasonOf(err) != skillsig.ReasonDigestMismatch {
		t.Fatalf("changed bytes: %v", err)
	}
	if err := trust.Verify(digest, [][]byte{[]byte("{not a bundle")}); reasonOf(err) != skillsig.ReasonInvalidBundle {
		t.Fatalf("garbage: %v", err)
	}
	// Another key's bundle beside the trusted one does not hide it.
	if err := trust.Verify(digest, [][]byte{byOther, good}); err != nil {
		t.Fatalf("two bundles, one trusted: %v", err)
	}
	// Two keys trusted: either signs.
	if err := trustOf(t, other, release).Verify(digest, [][]byte{byOther}); err != nil {
		t.Fatalf("second trusted key: %v", err)
	}
}

// A bundle claiming the trusted key's hint but signed by another key is
// refused by the signature check itself, not only by the hint.
func TestVerify_ForgedHintIsRefused(t *testing.T) {
	release, _ := skillsig.GenerateSigner()
	trust := trustOf(t, release)
	manifest := []byte(`{"schemaVersion":2}`)
	good, _ := release.Sign(manifest)
	other, _ := skillsig.GenerateSigner()
	forged, _ := other.Sign(manifest)
	// Move the other key's signature into the trusted key's bundle.
	goodSig, forgedSig := sigOf(t, good), sigOf(t, forged)
	tampered := []byte(replaceOnce(string(good), goodSig, forgedSig))
	if err := trust.Verify(digestOf(manifest), [][]byte{tampered}); reasonOf(err) != skillsig.ReasonUntrustedSigner {
		t.Fatalf("forged: %v", err)
	}
}

func TestParse_BadKeys(t *testing.T) {
	if _, err := skillsig.ParseTrust([]byte("not pem")); err == nil {
		t.Error("no key accepted")
	}
	s, _ := skillsig.GenerateSigner()
	priv, _ := s.MarshalPrivateKey()
	if _, err := skillsig.ParseTrust(priv); err == nil {
		t.Error("a private key accepted as a trusted public key")
	}
	back, err := skillsig.ParseSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := s.PublicKeyPEM()
	p2, _ := back.PublicKeyPEM()
	if string(p1) != string(p2) {
		t.Fatal("the key did not round-trip")
	}
	if _, err := skillsig.ParseSigner(p1); err == nil {
		t.Error("a public key accepted as a signing key")
	}
}

// BenchmarkVerify is the cost of verifying one skill artifact's bundle.
func BenchmarkVerify(b *testing.B) {
	s, _ := skillsig.GenerateSigner()
	trust := trustOf(b, s)
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.loadout.skill.v1"}`)
	bundle, _ := s.Sign(manifest)
	digest := digestOf(manifest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := trust.Verify(digest, [][]byte{bundle}); err != nil {
			b.Fatal(err)
		}
	}
}
