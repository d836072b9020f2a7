package skillsig_test

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillsig"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func keysOf(t testing.TB, signers ...*skillsig.Signer) *sigcheck.Keys {
	t.Helper()
	var pems [][]byte
	for _, s := range signers {
		p, err := s.PublicKeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		pems = append(pems, p)
	}
	keys, err := sigcheck.ParseKeys(pems...)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func reasonOf(err error) string {
	var e *sigcheck.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// sigstoreAccepts is Sigstore's own verdict (sigstore-go, offline, key
// material only) on bundle for the artifact digest with trusted key pub:
// the oracle the standard-library verifier is held to.
func sigstoreAccepts(t testing.TB, trusted *skillsig.Signer, digest string, raw []byte) bool {
	t.Helper()
	p, _ := trusted.PublicKeyPEM()
	block, _ := pem.Decode(p)
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]*root.ExpiringKey{sigcheck.KeyID(block.Bytes): root.NewExpiringKey(v, time.Time{}, time.Time{})}
	verifier, err := verify.NewVerifier(root.NewTrustedPublicKeyMaterialFromMapping(keys), verify.WithNoObserverTimestamps())
	if err != nil {
		t.Fatal(err)
	}
	var pb protobundle.Bundle
	if protojson.Unmarshal(raw, &pb) != nil {
		return false
	}
	b, err := bundle.NewBundle(&pb)
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(digest[len("sha256:"):])
	_, err = verifier.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithKey()))
	return err == nil
}

// A namespace that trusts one key: the artifact it signed verifies; an
// unsigned one, one signed by another key, and one whose bytes changed
// after signing are refused, each with its reason. In every case the
// standard-library verifier agrees with Sigstore's own.
func TestVerify_OnlyTheTrustedKeysSignatureOverTheseBytes(t *testing.T) {
	release, err := skillsig.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := skillsig.GenerateSigner()
	keys := keysOf(t, release)
	manifest := []byte(`{"schemaVersion":2,"artifactType":"application/vnd.loadout.skill.v1"}`)
	digest := digestOf(manifest)
	good, err := release.Sign(manifest)
	if err != nil {
		t.Fatal(err)
	}
	changed := append([]byte(nil), manifest...)
	changed[len(changed)-2] = 'X'
	byOther, _ := other.Sign(manifest)
	for _, c := range []struct {
		name   string
		digest string
		bundle []byte
		reason string
	}{
		{"correctly signed", digest, good, ""},
		{"another key", digest, byOther, sigcheck.ReasonUntrustedSigner},
		{"changed bytes", digestOf(changed), good, sigcheck.ReasonDigestMismatch},
		{"forged hint", digest, forgeHint(t, good, byOther), sigcheck.ReasonUntrustedSigner},
		{"garbage", digest, []byte("{not a bundle"), sigcheck.ReasonInvalidBundle},
	} {
		err := keys.Verify(c.digest, [][]byte{c.bundle})
		if reasonOf(err) != c.reason || (c.reason == "") != (err == nil) {
			t.Errorf("%s: %v, want reason %q", c.name, err, c.reason)
		}
		if got := sigstoreAccepts(t, release, c.digest, c.bundle); got != (c.reason == "") {
			t.Errorf("%s: sigstore-go accepts = %v, sigcheck %v: the verifiers disagree", c.name, got, err)
		}
	}
	if err := keys.Verify(digest, nil); reasonOf(err) != sigcheck.ReasonUnsigned {
		t.Fatalf("unsigned: %v", err)
	}
	// Another key's bundle beside the trusted one does not hide it.
	if err := keys.Verify(digest, [][]byte{byOther, good}); err != nil {
		t.Fatalf("two bundles, one trusted: %v", err)
	}
	// Two keys trusted: either signs.
	if err := keysOf(t, other, release).Verify(digest, [][]byte{byOther}); err != nil {
		t.Fatalf("second trusted key: %v", err)
	}
}

// forgeHint moves the other key's signature into the trusted key's bundle:
// it claims the trusted key's hint, so only the signature check refuses it.
func forgeHint(t *testing.T, good, byOther []byte) []byte {
	t.Helper()
	return []byte(replaceOnce(string(good), sigOf(t, good), sigOf(t, byOther)))
}

func TestParse_BadKeys(t *testing.T) {
	if _, err := sigcheck.ParseKeys([]byte("not pem")); err == nil {
		t.Error("no key accepted")
	}
	s, _ := skillsig.GenerateSigner()
	priv, _ := s.MarshalPrivateKey()
	if _, err := sigcheck.ParseKeys(priv); err == nil {
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

// BenchmarkVerify is the cost of verifying one skill artifact's bundle
// (sigcheck, the standard-library verifier every binary uses).
func BenchmarkVerify(b *testing.B) {
	s, _ := skillsig.GenerateSigner()
	keys := keysOf(b, s)
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.loadout.skill.v1"}`)
	bundle, _ := s.Sign(manifest)
	digest := digestOf(manifest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := keys.Verify(digest, [][]byte{bundle}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify_SigstoreGo is the same check by Sigstore's own verifier
// (what skillsig used before sigcheck), setting up its trusted material
// each time as a fetch under a context's requirements would.
func BenchmarkVerify_SigstoreGo(b *testing.B) {
	s, _ := skillsig.GenerateSigner()
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.loadout.skill.v1"}`)
	bundle, _ := s.Sign(manifest)
	digest := digestOf(manifest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !sigstoreAccepts(b, s, digest, bundle) {
			b.Fatal("refused")
		}
	}
}
