package v1alpha1

// ContentRule is a platform rule over what agents read: a CEL
// expression over one Skill or one tool, true when the content is allowed.
// Content that breaks a rule is refused with the rule's message, as any
// invalid input of the Workspace is (docs/concepts.md, "Content rules").
// Honoured only on an imposed Extension of a platform namespace.
type ContentRule struct {
	// name of the rule, unique within the extension; refusals name it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	Name string `json:"name"`

	// target is what the rule reads: Skill (the variable skill: name,
	// description, frontmatter, body, files, links) or Tool (the variable
	// tool: name, description, extension, discovered, links), every tool
	// of the Workspace but the built-in ones, declared or discovered from an
	// MCP server.
	// +required
	Target ContentTarget `json:"target"`

	// expression is a CEL bool: true allows the content. Its cost is
	// bounded before it runs, as a hook's (docs/hooks.md).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`

	// message says why content that breaks the rule is refused.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// ContentTarget is what a content rule reads.
// +kubebuilder:validation:Enum=Skill;Tool
type ContentTarget string

const (
	// ContentTargetSkill: each Skill the Workspace publishes.
	ContentTargetSkill ContentTarget = "Skill"
	// ContentTargetTool: each tool of the Workspace's registry but the
	// built-in ones.
	ContentTargetTool ContentTarget = "Tool"
)
