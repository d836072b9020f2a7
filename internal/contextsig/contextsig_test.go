package contextsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func anchor(t *testing.T, keys ...ed25519.PrivateKey) *Verifier {
	t.Helper()
	s, err := NewSigner(keys)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseTrustAnchor(s.TrustAnchor())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func reason(err error) string {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return ""
}

var dev = Subject{Namespace: "team-a", Name: "dev", UID: "u-1", ConfigMap: "dev-context"}

func TestVerify_AcceptsTheSignedContextAndRefusesEveryForgery(t *testing.T) {
	k := testenv.SigningKey(t)
	signer, _ := NewSigner([]ed25519.PrivateKey{k})
	v := anchor(t, k)
	doc := signer.Sign("sha256:aa", dev)
	if err := v.Verify(doc, "sha256:aa", Subject{Namespace: "team-a", Name: "dev", ConfigMap: "dev-context"}); err != nil {
		t.Fatalf("the manager's own signature: %v", err)
	}
	other, _ := NewSigner([]ed25519.PrivateKey{testenv.SigningKey(t)})
	for name, tc := range map[string]struct {
		doc    []byte
		hash   string
		want   Subject
		reason string
	}{
		"unsigned":                            {nil, "sha256:aa", dev, ReasonUnsigned},
		"garbage":                             {[]byte("{"), "sha256:aa", dev, ReasonMalformed},
		"other data":                          {doc, "sha256:bb", dev, ReasonHashMismatch},
		"another workspace":                   {signer.Sign("sha256:aa", Subject{Namespace: "team-b", Name: "dev", UID: "u-2"}), "sha256:aa", dev, ReasonWrongWorkspace},
		"signed by another key":               {other.Sign("sha256:aa", dev), "sha256:aa", dev, ReasonBadSignature},
		"a copy under another ConfigMap name": {signer.Sign("sha256:aa", Subject{Namespace: "team-a", Name: "dev", UID: "u-1", ConfigMap: "old-copy"}), "sha256:aa", dev, ReasonWrongConfigMap},
		"subject edited after signing": {[]byte(strings.Replace(string(signer.Sign("sha256:aa", Subject{Namespace: "team-b", Name: "dev", ConfigMap: "dev-context"})), `"team-b"`, `"team-a"`, 1)),
			"sha256:aa", dev, ReasonBadSignature},
	} {
		t.Run(name, func(t *testing.T) {
			err := v.Verify(tc.doc, tc.hash, Subject{Namespace: tc.want.Namespace, Name: tc.want.Name, ConfigMap: tc.want.ConfigMap})
			if got := reason(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
		})
	}
}

// A rotation adds the new key to the set before the old one leaves: while
// both sign, an anchor with only the old key and one with only the new key
// both verify, so no pod is cut off whichever anchor it was admitted with.
func TestVerify_KeyRotationOverlapsWithoutAnOutage(t *testing.T) {
	oldKey, newKey := testenv.SigningKey(t), testenv.SigningKey(t)
	both, _ := NewSigner([]ed25519.PrivateKey{newKey, oldKey})
	doc := both.Sign("sha256:aa", dev)
	for name, v := range map[string]*Verifier{"old anchor": anchor(t, oldKey), "new anchor": anchor(t, newKey), "both": anchor(t, oldKey, newKey)} {
		if err := v.Verify(doc, "sha256:aa", dev); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	onlyNew, _ := NewSigner([]ed25519.PrivateKey{newKey})
	if err := anchor(t, oldKey).Verify(onlyNew.Sign("sha256:aa", dev), "sha256:aa", dev); reason(err) != ReasonBadSignature {
		t.Errorf("after the old key left the set, an old-only anchor must refuse: %v", err)
	}
}

func TestSign_IsDeterministic(t *testing.T) {
	k1, k2 := testenv.SigningKey(t), testenv.SigningKey(t)
	a, _ := NewSigner([]ed25519.PrivateKey{k1, k2})
	b, _ := NewSigner([]ed25519.PrivateKey{k2, k1, k2})
	if string(a.Sign("sha256:aa", dev)) != string(b.Sign("sha256:aa", dev)) {
		t.Fatal("the same key set and context must give the same bytes")
	}
	if a.TrustAnchor() != b.TrustAnchor() || strings.Count(a.TrustAnchor(), "\n") != 2 {
		t.Fatalf("trust anchor %q vs %q", a.TrustAnchor(), b.TrustAnchor())
	}
}

func TestParseTrustAnchor_RefusesBadInput(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n", "rsa AAAA", "ed25519 !!!", "ed25519 AAAA"} {
		if _, err := ParseTrustAnchor(text); err == nil {
			t.Errorf("%q: want an error", text)
		}
	}
}

func TestPrivateKey_RoundTripsThroughPEM(t *testing.T) {
	k := testenv.SigningKey(t)
	b, err := MarshalPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePrivateKey(b)
	if err != nil || !got.Equal(k) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := ParsePrivateKey([]byte("not pem")); err == nil {
		t.Fatal("want an error for garbage")
	}
}

// BenchmarkVerify is the whole cost hostd adds to a context load: parse the
// signature document of a two-key set and verify one Ed25519 signature.
func BenchmarkVerify(b *testing.B) {
	_, k1, _ := ed25519.GenerateKey(rand.Reader)
	_, k2, _ := ed25519.GenerateKey(rand.Reader)
	s, _ := NewSigner([]ed25519.PrivateKey{k1, k2})
	v, _ := ParseTrustAnchor(s.TrustAnchor())
	doc := s.Sign("sha256:"+strings.Repeat("ab", 32), dev)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Verify(doc, "sha256:"+strings.Repeat("ab", 32), dev); err != nil {
			b.Fatal(err)
		}
	}
}
