package v1alpha1

// SkillSigners says who must have signed the OCI skills of a Workspace
// (docs/security.md "Signed skills"): an OCI skill is accepted
// only with a Sigstore bundle signed by one of publicKeys over exactly its
// artifact, verified offline by the agent pod that fetches it; git skills,
// which carry no signature, are refused. Declared on an imposed Extension
// of a platform namespace it is the platform's requirement for the
// namespaces the extension applies to. Declared by a tenant (a Workspace,
// an Extension of its own namespace) it is one more requirement: every
// declaration must be met, so a tenant can narrow the platform's trust but
// never drop it.
//
// +kubebuilder:validation:XValidation:rule="(has(self.publicKeys) && size(self.publicKeys) > 0) || (has(self.identities) && size(self.identities) > 0)",message="name at least one public key or identity"
// +kubebuilder:validation:XValidation:rule="!has(self.identities) || size(self.identities) == 0 || has(self.trustedRoot)",message="identities need a trustedRoot: the certificate authorities and timestamp authorities that vouch for them"
type SkillSigners struct {
	// publicKeys are PEM public keys (PKIX "PUBLIC KEY", ECDSA, as `loadout
	// push --sign-key` signs with); a signature by any one of them meets
	// this declaration.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	PublicKeys []PEMPublicKey `json:"publicKeys,omitempty"`

	// identities are keyless signers: a signature whose short-lived
	// certificate, issued by a certificate authority of trustedRoot, names
	// one of them (subject and OIDC issuer, compared exactly) meets this
	// declaration as a key of publicKeys does. Verified offline: the time
	// of signing comes from the bundle's signed timestamp or transparency
	// log entry, checked against trustedRoot. The lean sidecar verifies
	// keys only and refuses what only an identity would accept.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Identities []SkillSignerIdentity `json:"identities,omitempty"`

	// trustedRoot is a Sigstore trusted root (trusted_root.json, media type
	// application/vnd.dev.sigstore.trustedroot+json;version=0.1): the
	// certificate authorities, timestamp authorities and transparency logs
	// identities are verified under. Kept in the declaration, never fetched.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	TrustedRoot string `json:"trustedRoot,omitempty"`
}

// SkillSignerIdentity is one keyless signer.
type SkillSignerIdentity struct {
	// issuer is the OIDC issuer the certificate names
	// (https://token.actions.githubusercontent.com for GitHub Actions).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Issuer string `json:"issuer"`

	// subject is the certificate's subject alternative name: an email, or
	// a URI such as a workflow's
	// https://github.com/ORG/REPO/.github/workflows/release.yml@refs/heads/main.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Subject string `json:"subject"`
}

// PEMPublicKey is one PEM-encoded public key.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=4096
// +kubebuilder:validation:XValidation:rule="self.contains('-----BEGIN PUBLIC KEY-----')",message="must be a PEM public key (-----BEGIN PUBLIC KEY-----)"
type PEMPublicKey string

// SkillSignerRequirement is one declaration of SkillSigners in force for a
// Workspace, as its status reports it.
type SkillSignerRequirement struct {
	// declaredBy names the declaration: an Extension's NAMESPACE/NAME, or
	// "Workspace NAMESPACE/NAME".
	// +required
	// +kubebuilder:validation:MaxLength=512
	DeclaredBy string `json:"declaredBy"`

	// authority is platform for an imposed extension of a platform
	// namespace, project for the tenant's own.
	// +required
	// +kubebuilder:validation:MaxLength=16
	Authority string `json:"authority"`

	// keyIDs name the trusted keys: base64 of the SHA-256 of each key's
	// PKIX encoding, as a Sigstore bundle's key hint names its signer.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	KeyIDs []string `json:"keyIDs,omitempty"`

	// identities are the trusted keyless signers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Identities []SkillSignerIdentity `json:"identities,omitempty"`
}
