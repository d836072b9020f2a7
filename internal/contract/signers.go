package contract

// SignerRequirement is one declaration of who must have signed a context's
// OCI skills (Registry.SkillSigners, issue 47): an OCI skill is accepted
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
	// PublicKeys are PEM public keys (PKIX, ECDSA), each as declared with
	// surrounding space trimmed; a signature by any one meets the
	// requirement.
	PublicKeys []string `json:"publicKeys"`
	// KeyIDs name PublicKeys in the same order: base64 of the SHA-256 of
	// each key's PKIX encoding, as a bundle's key hint names its signer.
	KeyIDs []string `json:"keyIds"`
}
