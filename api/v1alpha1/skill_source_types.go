package v1alpha1

// SkillSource names immutable content that provides a skill's body and files
// (its SKILL.md and the rest of its directory), for skills too large or too
// binary for etcd. The controller publishes only the pinned reference; the
// agent side (loadout materialize, hostd --materialize) fetches it once per
// digest or commit, verifies it and writes it into the agent's skill tree.
//
// A source names no credential. The agent pod that fetches it authenticates
// with the registry or git credentials mounted into that pod (a docker-config
// Secret of the pod's own namespace, see docs/concepts.md), so a Skill can
// never make a tenant's agent use another namespace's credential, and the
// manager never reads a Secret.
//
// +kubebuilder:validation:XValidation:rule="has(self.oci) != has(self.git)",message="exactly one of oci or git must be set"
type SkillSource struct {
	// oci is an OCI artifact made by `loadout push`, pinned by digest.
	// +optional
	OCI *OCISkillSource `json:"oci,omitempty"`

	// git is a directory of a git repository at a full commit.
	// +optional
	Git *GitSkillSource `json:"git,omitempty"`
}

// OCISkillSource is an OCI artifact holding one skill directory
// (artifactType application/vnd.loadout.skill.v1, docs/concepts.md).
type OCISkillSource struct {
	// reference is REGISTRY/REPOSITORY@sha256:<64 hex>: pinned by digest, so
	// the content can never change under the same Skill. Tags are not
	// accepted, not even beside a digest.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('@sha256:[0-9a-f]{64}$')",message="reference must be pinned by digest (REGISTRY/REPOSITORY@sha256:<64 lowercase hex>); tags are mutable and not accepted"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[^@]*/[^/@]*:[^/@]*@')",message="reference must not name a tag next to its digest: the digest alone pins the content"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+@sha256:[0-9a-f]{64}$')",message="reference must be REGISTRY[:PORT]/REPOSITORY@sha256:<digest> with a lowercase repository path"
	Reference string `json:"reference"`
}

// GitSkillSource is a directory of a git repository at one commit.
type GitSkillSource struct {
	// url of the repository, https:// or ssh://. Plain http and the git
	// protocol are not accepted: they cannot authenticate the server.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('ssh://')",message="url must start with https:// or ssh://"
	URL string `json:"url"`

	// commit is the full 40-hex commit id. Branches, tags and short ids are
	// not accepted: they can move.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-f]{40}$')",message="commit must be a full 40-character lowercase hex commit id (no branch, tag or short id)"
	Commit string `json:"commit"`

	// path of the skill directory inside the repository (the directory that
	// holds SKILL.md); empty means the repository root.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="path must be relative (no leading '/')"
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '..')",message="path must not contain a '..' segment"
	// +kubebuilder:validation:XValidation:rule="!self.contains('\\\\')",message="path must use '/' separators (no backslash)"
	Path string `json:"path,omitempty"`
}
