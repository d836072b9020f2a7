package signerpolicy_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/signerpolicy"
)

func pemKey(t *testing.T) string {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(k.Public())
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// Two spellings of one key (indented, its lines re-wrapped by YAML) are one
// key: normal form, one id, duplicates dropped.
func TestFromAPI_NormalFormAndIDs(t *testing.T) {
	k := pemKey(t)
	r, err := signerpolicy.FromAPI("ns/x", contract.AuthorityPlatform, &v1alpha1.SkillSigners{PublicKeys: []v1alpha1.PEMPublicKey{
		v1alpha1.PEMPublicKey("\n  " + k + "\n"), v1alpha1.PEMPublicKey(k)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.PublicKeys) != 1 || r.PublicKeys[0] != k || len(r.KeyIDs) != 1 || len(r.KeyIDs[0]) != 44 {
		t.Fatalf("%+v", r)
	}
	if r, err := signerpolicy.FromAPI("ns/x", contract.AuthorityPlatform, nil); r != nil || err != nil {
		t.Fatalf("no declaration: %v %v", r, err)
	}
	r, err = signerpolicy.FromAPI("ns/x", contract.AuthorityProject, &v1alpha1.SkillSigners{PublicKeys: []v1alpha1.PEMPublicKey{v1alpha1.PEMPublicKey(k + k)}})
	if err == nil || r == nil || len(r.PublicKeys) != 0 {
		t.Fatalf("two keys in one entry: %v %+v", err, r)
	}
}

// The SkillSignatures condition: none required; required, naming each
// declaration and its keys; and False naming the git skills agents will
// refuse.
func TestCondition_SaysWhoMustSignAndWhatWillBeRefused(t *testing.T) {
	if ok, reason, _ := signerpolicy.Condition(nil, nil); !ok || reason != vocab.ReasonSignaturesNotRequired {
		t.Errorf("none: %v %s", ok, reason)
	}
	r, _ := signerpolicy.FromAPI("loadout-system/release-signers", contract.AuthorityPlatform, &v1alpha1.SkillSigners{PublicKeys: []v1alpha1.PEMPublicKey{v1alpha1.PEMPublicKey(pemKey(t))}})
	reqs := signerpolicy.Effective([]*contract.SignerRequirement{r}, nil)
	oci := contract.SkillDoc{Name: "pdf", Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "r/s@sha256:" + strings.Repeat("a", 64)}}}
	ok, reason, msg := signerpolicy.Condition(reqs, []contract.SkillDoc{oci})
	if !ok || reason != vocab.ReasonSignaturesRequired || !strings.Contains(msg, "loadout-system/release-signers (platform; keys "+r.KeyIDs[0]) {
		t.Errorf("required: %v %s %q", ok, reason, msg)
	}
	git := contract.SkillDoc{Name: "lint", Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: strings.Repeat("a", 40)}}}
	ok, reason, msg = signerpolicy.Condition(reqs, []contract.SkillDoc{oci, git})
	if ok || reason != vocab.ReasonUnsignableSkill || !strings.Contains(msg, "lint") || strings.Contains(msg, "pdf,") {
		t.Errorf("git skill: %v %s %q", ok, reason, msg)
	}
	if got := signerpolicy.ToAPI(reqs); len(got) != 1 || got[0].KeyIDs[0] != r.KeyIDs[0] || got[0].Authority != "platform" {
		t.Errorf("status: %+v", got)
	}
}

// A keyless declaration: identities with their trusted root make a
// requirement (status and condition name the identity); identities
// without a readable trusted root, or an identity without a subject, are
// refused as InvalidSkillSigners with a requirement nothing meets.
func TestFromAPI_Identities(t *testing.T) {
	id := v1alpha1.SkillSignerIdentity{Issuer: "https://token.actions.githubusercontent.com", Subject: "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main"}
	root := `{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","certificateAuthorities":[{}]}`
	r, err := signerpolicy.FromAPI("ns/x", contract.AuthorityPlatform, &v1alpha1.SkillSigners{Identities: []v1alpha1.SkillSignerIdentity{id}, TrustedRoot: root})
	if err != nil || len(r.Identities) != 1 || r.TrustedRoot != root || len(r.PublicKeys) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	reqs := signerpolicy.Effective([]*contract.SignerRequirement{r}, []*contract.SignerRequirement{r})
	if len(reqs) != 1 {
		t.Errorf("the same identity twice: %d requirements", len(reqs))
	}
	if _, _, msg := signerpolicy.Condition(reqs, nil); !strings.Contains(msg, "identity "+id.Subject+" from "+id.Issuer) {
		t.Errorf("condition %q", msg)
	}
	if st := signerpolicy.ToAPI(reqs); len(st) != 1 || len(st[0].Identities) != 1 || st[0].Identities[0] != id {
		t.Errorf("status %+v", st)
	}
	for name, s := range map[string]*v1alpha1.SkillSigners{
		"no trusted root": {Identities: []v1alpha1.SkillSignerIdentity{id}},
		"not a root":      {Identities: []v1alpha1.SkillSignerIdentity{id}, TrustedRoot: `{"tlogs":[]}`},
		"no subject":      {Identities: []v1alpha1.SkillSignerIdentity{{Issuer: id.Issuer}}, TrustedRoot: root},
		"neither":         {},
	} {
		r, err := signerpolicy.FromAPI("ns/x", contract.AuthorityProject, s)
		var invalid *signerpolicy.InvalidError
		if !errors.As(err, &invalid) || r == nil || len(r.PublicKeys)+len(r.Identities) != 0 {
			t.Errorf("%s: %+v %v", name, r, err)
		}
	}
}
