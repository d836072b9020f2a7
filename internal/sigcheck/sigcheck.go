// Package sigcheck checks a skill artifact's Sigstore signatures with the
// standard library alone: key-signed bundles (keys.go), a
// context's signer requirements, every one of which must be met
// (require.go), and the reasons a signature is refused. Every binary
// verifies through it, the lean sidecar (loadout-hostd) included: the
// Sigstore libraries that sign (internal/skillsig) bring gRPC, which the
// sidecar must not link (TestSidecarLinksNoClient), and the skillsig tests
// hold this verifier to Sigstore's own verdicts.
package sigcheck

import "fmt"

// BundleMediaType is the artifact type of a skill's Sigstore bundle among
// its OCI referrers.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Reasons a signature is refused; each is safe to show anywhere.
const (
	// ReasonUnsigned: the artifact carries no bundle.
	ReasonUnsigned = "Unsigned"
	// ReasonUntrustedSigner: no bundle is signed by a trusted key.
	ReasonUntrustedSigner = "UntrustedSigner"
	// ReasonDigestMismatch: a bundle signs other bytes (the artifact
	// changed after signing, or the bundle is another artifact's).
	ReasonDigestMismatch = "DigestMismatch"
	// ReasonInvalidBundle: a bundle that does not parse or is not a
	// message signature by a key.
	ReasonInvalidBundle = "InvalidBundle"
	// ReasonKeylessUnsupported: only a keyless identity would accept the
	// artifact, and this binary verifies keys only (the lean sidecar).
	ReasonKeylessUnsupported = "KeylessUnsupported"
)

// Error is a refused signature.
type Error struct {
	Reason string
	// DeclaredBy names the requirement refused (a context's
	// contract.SignerRequirement), when one was.
	DeclaredBy string
	Err        error
}

func (e *Error) Error() string { return fmt.Sprintf("signature %s: %v", e.Reason, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Verifier accepts an artifact (its manifest's digest, "sha256:…") only if
// one of its bundles signs exactly it with a trusted key; the error is an
// *Error. internal/skillsig.Trust is one.
type Verifier interface {
	Verify(digest string, bundles [][]byte) error
}
