// Package signerpolicy computes who must have signed a Workspace's OCI
// skills from the declarations that apply to it (issue 47, docs/security.md
// "Signed skills"): each imposed platform extension's skillSigners is a
// requirement, and a tenant's declarations (the Workspace's, an extension
// of its own namespace) add requirements, never remove one; an agent pod
// loads an OCI skill only if it meets every requirement
// (internal/sigcheck). It is pure: the controller, `loadout preview` and
// the held-context path call it and get the same value.
package signerpolicy

import (
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
// each, re-encoded, sorted by id, unique); nil for no declaration. Keys
// that do not parse are an *InvalidError, and the requirement returned
// beside it has no key: no artifact can meet it, so a caller that
// publishes it anyway refuses every OCI skill (fail closed) rather than
// dropping the declaration.
func FromAPI(declaredBy, authority string, s *v1alpha1.SkillSigners) (*contract.SignerRequirement, error) {
	if s == nil {
		return nil, nil
	}
	r := &contract.SignerRequirement{DeclaredBy: declaredBy, Authority: authority, PublicKeys: []string{}, KeyIDs: []string{}}
	type key struct{ pem, id string }
	var keys []key
	for i, p := range s.PublicKeys {
		normal, id, err := sigcheck.NormalKey([]byte(strings.TrimSpace(string(p))))
		if err != nil {
			return &contract.SignerRequirement{DeclaredBy: declaredBy, Authority: authority, PublicKeys: []string{}, KeyIDs: []string{}},
				&InvalidError{DeclaredBy: declaredBy, Err: fmt.Errorf("publicKeys[%d]: %w", i, err)}
		}
		keys = append(keys, key{normal, id})
	}
	if len(keys) == 0 {
		return r, &InvalidError{DeclaredBy: declaredBy, Err: fmt.Errorf("no public key")}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.id, b.id) })
	keys = slices.CompactFunc(keys, func(a, b key) bool { return a.id == b.id })
	for _, k := range keys {
		r.PublicKeys, r.KeyIDs = append(r.PublicKeys, k.pem), append(r.KeyIDs, k.id)
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
		if r == nil || slices.ContainsFunc(out, func(o contract.SignerRequirement) bool { return slices.Equal(o.KeyIDs, r.KeyIDs) }) {
			continue
		}
		out = append(out, *r)
	}
	return out
}

// ToAPI is the requirements as the Workspace's status reports them.
func ToAPI(reqs []contract.SignerRequirement) []v1alpha1.SkillSignerRequirement {
	var out []v1alpha1.SkillSignerRequirement
	for _, r := range reqs[:min(len(reqs), vocab.MaxStatusListItems)] {
		out = append(out, v1alpha1.SkillSignerRequirement{DeclaredBy: r.DeclaredBy, Authority: r.Authority, KeyIDs: slices.Clone(r.KeyIDs)})
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
		by = append(by, fmt.Sprintf("%s (%s; keys %s)", r.DeclaredBy, r.Authority, strings.Join(r.KeyIDs, ", ")))
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
