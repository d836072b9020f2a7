package v1alpha1

// LogicalName is the name by which agents know a skill, template or extension
// (SPEC R-SK-1): 1 to 64 lowercase letters, digits and single hyphens, neither
// starting nor ending with a hyphen.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
// +kubebuilder:validation:XValidation:rule="!self.contains('--')",message="must not contain consecutive hyphens ('--')"
type LogicalName string

// Description is a human-readable, non-blank summary shown to agents.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="self.trim().size() > 0",message="must not be blank"
type Description string

// ToolName names a tool as the agent calls it: a letter or underscore, then
// letters, digits, underscores or hyphens, at most 64 characters.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
type ToolName string

// ServiceReference points at a port and path of a Service in the namespace of
// the object that holds the reference. Loadout never calls any other URL.
type ServiceReference struct {
	// name of the Service, in the referring object's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// port of the Service to call.
	// +optional
	// +kubebuilder:default=443
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// path of the request, starting with '/'.
	// +optional
	// +kubebuilder:default="/"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must start with '/'"
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '..')",message="must not contain a '..' segment"
	Path string `json:"path,omitempty"`
}
