// Package signerpolicy computes who must have signed a Workspace's OCI
// skills from the declarations that apply to it (docs/security.md
// "Signed skills"): each imposed platform extension's skillSigners is a
// requirement, and a tenant's declarations (the Workspace's, an extension
// of its own namespace) add requirements, never remove one; an agent pod
// loads an OCI skill only if it meets every requirement
// (internal/sigcheck). It is pure: the controller, `loadout preview` and
// the held-context path call it and get the same value.
package signerpolicy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// InvalidError is a declaration whose keys do not parse: the Workspace's
// input is invalid (a tenant's declaration), or the platform's policy is
// broken (the platform's).
type InvalidError struct {
	DeclaredBy string
	Err        error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("skillSigners of %s: %v", e.DeclaredBy, e.Err)
}
func (e *InvalidError) Unwrap() error { return e.Err }

// Reason implements resources.ReasonedError.
func (e *InvalidError) Reason() vocab.ConditionReason { return vocab.ReasonInvalidSkillSigners }

// FromAPI is a declaration's requirement, its keys in normal form (one PEM
// each, re-encoded, sorted by id, unique) and its identities as declared;
// nil for no declaration. A declaration that does not parse is an
// *InvalidError, and the requirement returned beside it has neither key
// nor identity: no artifact can meet it, so a caller that publishes it
// anyway refuses every OCI skill (fail closed) rather than dropping the
// declaration.
func FromAPI(declaredBy, authority string, s *v1alpha1.SkillSigners) (*contract.SignerRequirement, error) {
	if s == nil {
		return nil, nil
	}
	unmeetable := &contract.SignerRequirement{DeclaredBy: declaredBy, Authority: authority, PublicKeys: []string{}, KeyIDs: []string{}}
	invalid := func(format string, args ...any) (*contract.SignerRequirement, error) {
		return unmeetable, &InvalidError{DeclaredBy: declaredBy, Err: fmt.Errorf(format, args...)}
	}
	r := &contract.SignerRequirement{DeclaredBy: declaredBy, Authority: authority, PublicKeys: []string{}, KeyIDs: []string{}}
	type key struct{ pem, id string }
	var keys []key
	for i, p := range s.PublicKeys {
		normal, id, err := sigcheck.NormalKey([]byte(strings.TrimSpace(string(p))))
		if err != nil {
			return invalid("publicKeys[%d]: %w", i, err)
		}
		keys = append(keys, key{normal, id})
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.id, b.id) })
	keys = slices.CompactFunc(keys, func(a, b key) bool { return a.id == b.id })
	for _, k := range keys {
		r.PublicKeys, r.KeyIDs = append(r.PublicKeys, k.pem), append(r.KeyIDs, k.id)
	}
	for i, id := range s.Identities {
		if strings.TrimSpace(id.Issuer) == "" || strings.TrimSpace(id.Subject) == "" {
			return invalid("identities[%d]: want an issuer and a subject", i)
		}
		r.Identities = append(r.Identities, contract.SignerIdentity{Issuer: id.Issuer, Subject: id.Subject})
	}
	if len(r.Identities) > 0 {
		// The trusted root is parsed where bundles are verified (the agent
		// side, which fails closed on one it cannot read); here it must at
		// least be a JSON object naming certificate authorities.
		var root struct {
			CertificateAuthorities []json.RawMessage `json:"certificateAuthorities"`
		}
		if err := json.Unmarshal([]byte(s.TrustedRoot), &root); err != nil || len(root.CertificateAuthorities) == 0 {
			return invalid("trustedRoot: want a Sigstore trusted root (JSON) with certificateAuthorities, for the identities")
		}
		r.TrustedRoot = s.TrustedRoot
	}
	if len(r.PublicKeys) == 0 && len(r.Identities) == 0 {
		return invalid("no public key and no identity")
	}
	return r, nil
}

// Effective is the requirements of a Workspace: the platform's, then the
// tenant's, nil entries skipped. A requirement whose key set equals an
// earlier one's is dropped (it adds nothing); no other is, so a tenant's
// declaration can only add to what must be met.
func Effective(platform, tenant []*contract.SignerRequirement) []contract.SignerRequirement {
	var out []contract.SignerRequirement
	for _, r := range append(slices.Clone(platform), tenant...) {
		if r == nil || slices.ContainsFunc(out, func(o contract.SignerRequirement) bool { return sameSigners(o, *r) }) {
			continue
		}
		out = append(out, *r)
	}
	return out
}

// sameSigners reports whether a and b accept the same signers.
func sameSigners(a, b contract.SignerRequirement) bool {
	return slices.Equal(a.KeyIDs, b.KeyIDs) && slices.Equal(a.Identities, b.Identities) && a.TrustedRoot == b.TrustedRoot
}

// ToAPI is the requirements as the Workspace's status reports them.
func ToAPI(reqs []contract.SignerRequirement) []v1alpha1.SkillSignerRequirement {
	var out []v1alpha1.SkillSignerRequirement
	for _, r := range reqs[:min(len(reqs), vocab.MaxStatusListItems)] {
		st := v1alpha1.SkillSignerRequirement{DeclaredBy: r.DeclaredBy, Authority: r.Authority, KeyIDs: slices.Clone(r.KeyIDs)}
		for _, id := range r.Identities {
			st.Identities = append(st.Identities, v1alpha1.SkillSignerIdentity{Issuer: id.Issuer, Subject: id.Subject})
		}
		out = append(out, st)
	}
	return out
}

// Condition is the SkillSignatures condition of a context with these
// requirements and skills (vocab.ConditionSkillSignatures).
func Condition(reqs []contract.SignerRequirement, skills []contract.SkillDoc) (ok bool, reason vocab.ConditionReason, message string) {
	if len(reqs) == 0 {
		return true, vocab.ReasonSignaturesNotRequired, "no declaration requires signed skills"
	}
	var by []string
	for _, r := range reqs {
		var signers []string
		if len(r.KeyIDs) > 0 {
			signers = append(signers, "keys "+strings.Join(r.KeyIDs, ", "))
		}
		for _, id := range r.Identities {
			signers = append(signers, "identity "+id.Subject+" from "+id.Issuer)
		}
		by = append(by, fmt.Sprintf("%s (%s; %s)", r.DeclaredBy, r.Authority, strings.Join(signers, ", ")))
	}
	required := "OCI skills load only with a Sigstore bundle by a key of each of: " + strings.Join(by, "; ")
	var git []string
	for _, s := range skills {
		if s.Source != nil && s.Source.Git != nil {
			git = append(git, s.Name)
		}
	}
	if len(git) > 0 {
		return false, vocab.ReasonUnsignableSkill, fmt.Sprintf("skills %s come from git, which carries no signature: agents refuse them. %s", strings.Join(git, ", "), required)
	}
	return true, vocab.ReasonSignaturesRequired, required
}
