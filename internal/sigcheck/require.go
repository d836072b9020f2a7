package sigcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/loadout-dev/loadout/internal/contract"
)

// All is every verifier at once: an artifact passes only if each accepts
// it. A namespace's requirements (the platform's and a tenant's) and a
// process's --skill-signers combine this way, so no one of them can drop
// another's.
type All []Verifier

// Verify implements Verifier: the first refusal, as it is.
func (a All) Verify(digest string, bundles [][]byte) error {
	for _, v := range a {
		if err := v.Verify(digest, bundles); err != nil {
			return err
		}
	}
	return nil
}

// Join is the verifiers that are not nil, as one: nil if none is.
func Join(vs ...Verifier) Verifier {
	var all All
	for _, v := range vs {
		if v != nil {
			all = append(all, v)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

// declared is one requirement of a context: its keys, and who declared it
// for the refusal.
type declared struct {
	keys *Keys
	by   string
}

func (d declared) Verify(digest string, bundles [][]byte) error {
	err := d.keys.Verify(digest, bundles)
	if e, ok := err.(*Error); ok { //nolint:errorlint // Keys returns *Error itself
		return &Error{Reason: e.Reason, DeclaredBy: d.by, Err: fmt.Errorf("signers required by %s: %w", d.by, e.Err)}
	}
	return err
}

// Required is the verifier of a context's signer requirements
// (contract.Registry.SkillSigners): nil when there are none. A requirement
// whose keys do not parse is an error, and the caller must then refuse
// every OCI skill of the context (fail closed), never load them unchecked.
func Required(reqs []contract.SignerRequirement) (Verifier, error) {
	var out All
	for i, r := range reqs {
		pems := make([][]byte, len(r.PublicKeys))
		for j, p := range r.PublicKeys {
			pems[j] = []byte(p)
		}
		keys, err := ParseKeys(pems...)
		if err != nil {
			return nil, fmt.Errorf("skill signer requirement %d (%s): %w", i+1, r.DeclaredBy, err)
		}
		out = append(out, declared{keys: keys, by: r.DeclaredBy})
	}
	return Join(out...), nil
}

// RequirementsDigest names a context's requirements ("" when none): fetched
// content verified under one set is not reused under another.
func RequirementsDigest(reqs []contract.SignerRequirement) string {
	if len(reqs) == 0 {
		return ""
	}
	b, _ := json.Marshal(reqs) // plain strings always marshal
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
