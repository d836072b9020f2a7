package v1alpha1

// LogicalName is the name by which agents know a skill, template or extension
// (rule R-SK-1): 1 to 64 lowercase letters, digits and single hyphens, neither
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

// ServiceScheme is how Loadout speaks to a Service.
// +kubebuilder:validation:Enum=HTTPS;HTTP
type ServiceScheme string

const (
	// SchemeHTTPS verifies the Service's certificate against caBundle (or the
	// system roots). The default.
	SchemeHTTPS ServiceScheme = "HTTPS"
	// SchemeHTTP is plain, unauthenticated HTTP. Only an explicit
	// `scheme: HTTP` selects it.
	SchemeHTTP ServiceScheme = "HTTP"
)

// ServiceReference points at a port and path of a Service in the namespace of
// the object that holds the reference. Loadout never calls any other URL, and
// never follows a redirect.
//
// +kubebuilder:validation:XValidation:rule="!has(self.caBundle) || !has(self.scheme) || self.scheme == 'HTTPS'",message="caBundle needs scheme HTTPS; plain HTTP cannot verify a certificate"
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

	// scheme is HTTPS (the default) or HTTP. Plain HTTP is never chosen for
	// you: set `scheme: HTTP` to opt in.
	// +optional
	Scheme ServiceScheme `json:"scheme,omitempty"`

	// caBundle is a PEM bundle of CA certificates that verifies the Service's
	// serving certificate, as in admission webhooks. Unset, the system roots
	// are used. The certificate must name <name>.<namespace>.svc.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`
}
