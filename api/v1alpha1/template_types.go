package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TemplateSpec is a reusable prompt with {{var}} placeholders. Agents
// also expose it as the slash command /<name>.
type TemplateSpec struct {
	// name is the logical template name and slash command. Defaults to
	// metadata.name, which must then follow the same rules.
	// +optional
	Name LogicalName `json:"name,omitempty"`

	// description is shown beside the slash command.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// body is the prompt text. Each {{name}} (name matching [A-Za-z_][A-Za-z0-9_]*)
	// is replaced by an argument; any other brace text stays literal.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Body string `json:"body"`

	// steps make the slash command a fixed sequence of actions run in order:
	// a tool call with arguments, or a template render into the user message.
	// Agents that can run them run each tool step through the hooks and stop
	// at the first blocked or failed step; elsewhere only the template part
	// renders. Unset, the command renders body alone.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Steps []TemplateStep `json:"steps,omitempty"`
}

// TemplateStep is one action of a command: exactly one of tool, render or
// template.
// +kubebuilder:validation:XValidation:rule="[has(self.tool), has(self.render), has(self.template)].filter(x, x).size() == 1",message="a step sets exactly one of tool, render or template"
// +kubebuilder:validation:XValidation:rule="!has(self.arguments) || has(self.tool)",message="arguments belong to a tool step"
// +kubebuilder:validation:XValidation:rule="!has(self.render) || self.render",message="render must be true when set"
type TemplateStep struct {
	// tool is the name of a tool in the Workspace's registry to call.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Tool string `json:"tool,omitempty"`

	// arguments of the tool call, a JSON object. String values may hold the
	// template's {{var}} placeholders, filled from the command's arguments.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Arguments *runtime.RawExtension `json:"arguments,omitempty"`

	// render, when true, renders this template's body into the user message.
	// +optional
	Render bool `json:"render,omitempty"`

	// template renders another template's body into the user message, with
	// the same arguments.
	// +optional
	Template LogicalName `json:"template,omitempty"`
}

// TemplateStatus reports the template's variables and validity.
type TemplateStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// variables are the distinct placeholder names of the body, in order of
	// first appearance.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Variables []string `json:"variables,omitempty"`

	// conditions: Valid.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Template is a reusable prompt with {{var}} placeholders, also a slash command.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tpl,categories=loadout
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Variables",type=string,JSONPath=`.status.variables`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || (self.metadata.name.size() <= 64 && self.metadata.name.matches('^[a-z0-9]([a-z0-9-]*[a-z0-9])?$') && !self.metadata.name.contains('--'))",message="spec.name is unset, so metadata.name must be a valid template name (1-64 of [a-z0-9-], no leading, trailing or double hyphen)"
type Template struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the template.
	// +required
	Spec TemplateSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// LogicalName returns spec.name, or metadata.name when spec.name is unset.
func (t *Template) LogicalName() string {
	if t.Spec.Name != "" {
		return string(t.Spec.Name)
	}
	return t.Name
}

// +kubebuilder:object:root=true

// TemplateList is a list of Templates.
type TemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Template `json:"items"`
}
