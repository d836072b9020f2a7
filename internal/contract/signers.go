package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// SignerRequirement is one declaration of who must have signed a context's
// OCI skills (Registry.SkillSigners): an OCI skill is accepted
// only if, for every requirement of its context, one of its Sigstore
// bundles is signed by one of the requirement's keys. The platform's
// requirements come first; a tenant's can only add to them. Git skills,
// which carry no signature, are refused where any requirement is set.
type SignerRequirement struct {
	// DeclaredBy names the declaration, for refusals and status: an
	// Extension's "NAMESPACE/NAME", or "Workspace NAMESPACE/NAME".
	DeclaredBy string `json:"declaredBy"`
	// Authority is AuthorityPlatform for an imposed extension of a platform
	// namespace, AuthorityProject for a tenant's declaration.
	Authority string `json:"authority"`
	// PublicKeys are PEM public keys (PKIX, ECDSA) in normal form; a
	// signature by any one meets the requirement. No key and no identity:
	// a declaration that did not parse, which nothing meets.
	PublicKeys []string `json:"publicKeys"`
	// KeyIDs name PublicKeys in the same order: base64 of the SHA-256 of
	// each key's PKIX encoding, as a bundle's key hint names its signer.
	KeyIDs []string `json:"keyIds"`
	// Identities are keyless signers: a signature whose certificate,
	// issued under TrustedRoot, names one of them meets the requirement as
	// a key of PublicKeys does.
	Identities []SignerIdentity `json:"identities,omitempty"`
	// TrustedRoot is the Sigstore trusted root (JSON) Identities are
	// verified under; set with Identities.
	TrustedRoot string `json:"trustedRoot,omitempty"`
}

// SignerIdentity is a keyless signer: the subject (an email or URI) of the
// short-lived certificate a Sigstore certificate authority issued it, and
// the OIDC issuer that certificate names.
type SignerIdentity struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
}

// SignerRequirementsDigest names a context's signer requirements ("" when
// none): fetched content verified under one set is not reused under
// another (hostd keeps it per digest).
func SignerRequirementsDigest(reqs []SignerRequirement) string {
	if len(reqs) == 0 {
		return ""
	}
	b, _ := json.Marshal(reqs) // plain strings always marshal
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
