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

// Keyless, when set, makes the verifier of a requirement's keyless
// identities under its trusted root (internal/skillsig, with the Sigstore
// libraries): the full CLI sets it. The lean sidecar leaves it nil, so a
// requirement it cannot check refuses what only an identity would accept
// (ReasonKeylessUnsupported), never loads it unchecked.
var Keyless func(identities []contract.SignerIdentity, trustedRoot string) (Verifier, error)

// declared is one requirement of a context: its keys and its identities'
// verifier (either may be nil), and who declared it for the refusal. A
// bundle accepted by either meets it.
type declared struct {
	keys    *Keys
	keyless Verifier
	by      string
}

func (d declared) Verify(digest string, bundles [][]byte) error {
	var vs []Verifier
	if d.keys != nil {
		vs = append(vs, d.keys)
	}
	if d.keyless != nil {
		vs = append(vs, d.keyless)
	}
	var refusals []*Error
	for _, v := range vs {
		err := v.Verify(digest, bundles)
		if err == nil {
			return nil
		}
		e, ok := err.(*Error) //nolint:errorlint // the verifiers return *Error themselves
		if !ok {
			e = &Error{Reason: ReasonInvalidBundle, Err: err}
		}
		refusals = append(refusals, e)
	}
	// The most telling refusal (refusalRank).
	e := refusals[0]
	for _, r := range refusals[1:] {
		if refusalRank(r.Reason) < refusalRank(e.Reason) {
			e = r
		}
	}
	return &Error{Reason: e.Reason, DeclaredBy: d.by, Err: fmt.Errorf("signers required by %s: %w", d.by, e.Err)}
}

// refusalRank orders reasons by what they tell: bytes changed after
// signing, a signer not trusted, an identity this binary cannot check, a
// bundle of another shape (a certificate to a key verifier), unsigned.
func refusalRank(reason string) int {
	for i, r := range []string{ReasonDigestMismatch, ReasonUntrustedSigner, ReasonKeylessUnsupported, ReasonInvalidBundle, ReasonUnsigned} {
		if r == reason {
			return i
		}
	}
	return 5
}

// unsupported refuses every artifact: the identities this binary cannot
// verify.
type unsupported struct{}

func (unsupported) Verify(digest string, bundles [][]byte) error {
	if len(bundles) == 0 {
		return &Error{Reason: ReasonUnsigned, Err: fmt.Errorf("no Sigstore bundle is attached to %s", digest)}
	}
	return &Error{Reason: ReasonKeylessUnsupported, Err: fmt.Errorf("only a keyless identity would accept it, and this binary verifies keys only (run the full loadout CLI's hostd or materialize to verify identities)")}
}

// Required is the verifier of a context's signer requirements
// (contract.Registry.SkillSigners): nil when there are none. A requirement
// with neither key nor identity (a declaration that did not parse), or
// whose keys or trusted root do not parse, is an error, and the caller
// must then refuse every OCI skill of the context (fail closed), never
// load them unchecked.
func Required(reqs []contract.SignerRequirement) (Verifier, error) {
	var out All
	for i, r := range reqs {
		d := declared{by: r.DeclaredBy}
		if len(r.PublicKeys) > 0 {
			pems := make([][]byte, len(r.PublicKeys))
			for j, p := range r.PublicKeys {
				pems[j] = []byte(p)
			}
			keys, err := ParseKeys(pems...)
			if err != nil {
				return nil, fmt.Errorf("skill signer requirement %d (%s): %w", i+1, r.DeclaredBy, err)
			}
			d.keys = keys
		}
		switch {
		case len(r.Identities) == 0:
		case Keyless == nil:
			d.keyless = unsupported{}
		default:
			v, err := Keyless(r.Identities, r.TrustedRoot)
			if err != nil {
				return nil, fmt.Errorf("skill signer requirement %d (%s): %w", i+1, r.DeclaredBy, err)
			}
			d.keyless = v
		}
		if d.keys == nil && d.keyless == nil {
			return nil, fmt.Errorf("skill signer requirement %d (%s): no public key and no identity", i+1, r.DeclaredBy)
		}
		out = append(out, d)
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
