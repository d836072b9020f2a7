package v1alpha1

// SkillSigners says who must have signed the OCI skills of a Workspace
// (issue 47, docs/security.md "Signed skills"): an OCI skill is accepted
// only with a Sigstore bundle signed by one of publicKeys over exactly its
// artifact, verified offline by the agent pod that fetches it; git skills,
// which carry no signature, are refused. Declared on an imposed Extension
// of a platform namespace it is the platform's requirement for the
// namespaces the extension applies to. Declared by a tenant (a Workspace,
// an Extension of its own namespace) it is one more requirement: every
// declaration must be met, so a tenant can narrow the platform's trust but
// never drop it.
type SkillSigners struct {
	// publicKeys are PEM public keys (PKIX "PUBLIC KEY", ECDSA, as `loadout
	// push --sign-key` signs with); a signature by any one of them meets
	// this declaration.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	PublicKeys []PEMPublicKey `json:"publicKeys"`
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
}
