package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SkillSpec is on-demand knowledge in the Agent Skills format: agents always see
// its name and description, and read its body and files only when they activate it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.files) || self.files.all(f, self.files.exists_one(g, g.path == f.path))",message="file paths must be unique"
// +kubebuilder:validation:XValidation:rule="has(self.source) || has(self.body)",message="body is required unless source is set",fieldPath=`.body`
// +kubebuilder:validation:XValidation:rule="!has(self.source) || (!has(self.body) && !has(self.files))",message="body and files must be unset when source is set: the source provides SKILL.md and every file"
type SkillSpec struct {
	// name is the logical skill name agents use. Defaults to metadata.name, which
	// must then follow the same rules.
	// +optional
	Name LogicalName `json:"name,omitempty"`

	// description tells agents when to use the skill. It is always in context.
	// +required
	Description Description `json:"description"`

	// body is the Markdown instructions agents read on activation. Required
	// unless source is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Body string `json:"body,omitempty"`

	// source takes the body and files from an immutable OCI artifact or git
	// commit instead of this object (docs/concepts.md, "Inline and external
	// skills"); name and description stay here, because the catalog needs
	// them without fetching anything.
	// +optional
	Source *SkillSource `json:"source,omitempty"`

	// files are extra documents an agent may request on activation, by path.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Files []SkillFile `json:"files,omitempty"`

	// license names the license of the skill's content.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	License string `json:"license,omitempty"`

	// compatibility says which environments the skill is meant for.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Compatibility string `json:"compatibility,omitempty"`

	// metadata is free-form string data carried with the skill.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Metadata map[string]string `json:"metadata,omitempty"`

	// allowedTools lists the tools the skill expects to use.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	AllowedTools []string `json:"allowedTools,omitempty"`
}

// SkillFile is one extra file of a skill: text in content, or any bytes in
// binaryContent (base64 in YAML and JSON), so that import never drops a
// binary file.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.content) && has(self.binaryContent))",message="set content or binaryContent, not both"
type SkillFile struct {
	// path of the file, relative to the skill: no leading '/', no '..' segment,
	// no backslash.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="path must be relative (no leading '/')"
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '..')",message="path must not contain a '..' segment"
	// +kubebuilder:validation:XValidation:rule="!self.contains('\\\\')",message="path must use '/' separators (no backslash)"
	Path string `json:"path"`

	// content of the file, as UTF-8 text.
	// +optional
	// +kubebuilder:validation:MaxLength=262144
	Content string `json:"content,omitempty"`

	// binaryContent of the file, for bytes that are not UTF-8 text (base64
	// encoded, at most 196,608 bytes decoded). Larger skills belong in an
	// external source.
	// +optional
	// +kubebuilder:validation:MaxLength=262144
	BinaryContent []byte `json:"binaryContent,omitempty"`

	// executable marks a file written with mode 0755 rather than 0644 when
	// the agent side materializes the skill (scripts).
	// +optional
	Executable bool `json:"executable,omitempty"`
}

// SkillStatus reports whether the Skill passed the controller's checks.
type SkillStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Valid.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Skill is on-demand knowledge for agents: a description that is always in
// context and a body and files read only on activation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sk,categories=loadout
// +kubebuilder:printcolumn:name="Skill",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || (self.metadata.name.size() <= 64 && self.metadata.name.matches('^[a-z0-9]([a-z0-9-]*[a-z0-9])?$') && !self.metadata.name.contains('--'))",message="spec.name is unset, so metadata.name must be a valid skill name (1-64 of [a-z0-9-], no leading, trailing or double hyphen)"
type Skill struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the skill.
	// +required
	Spec SkillSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	Status SkillStatus `json:"status,omitempty"`
}

// LogicalName returns spec.name, or metadata.name when spec.name is unset.
func (s *Skill) LogicalName() string {
	if s.Spec.Name != "" {
		return string(s.Spec.Name)
	}
	return s.Name
}

// +kubebuilder:object:root=true

// SkillList is a list of Skills.
type SkillList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Skill `json:"items"`
}
