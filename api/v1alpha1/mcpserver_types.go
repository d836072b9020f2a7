package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// MCPServer names an existing MCP server (streamable HTTP) as the
// implementation of an extension's tools. The manager lists its tools into
// the Extension's status; hostd calls them through the Workspace's hooks.
// Exactly one of service and url is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.service) != has(self.url)",message="exactly one of service or url must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.headersFrom) || !has(self.service) || !has(self.service.scheme) || self.service.scheme == 'HTTPS'",message="headersFrom needs HTTPS: a Service with scheme HTTP would carry the Secret's headers (an API key) in the clear",fieldPath=".headersFrom"
type MCPServer struct {
	// service is an in-cluster Service serving the MCP endpoint. Its
	// namespace defaults to the Extension's; another namespace is allowed only
	// for an Extension of a platform namespace.
	// +optional
	Service *MCPServiceReference `json:"service,omitempty"`

	// url is an HTTPS URL of the MCP endpoint, for a server outside the
	// cluster. Allowed only for an Extension of a platform namespace. hostd
	// sends it no cluster identity (no ServiceAccount token).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') && isURL(self)",message="must be an https:// URL"
	// +kubebuilder:validation:XValidation:rule="!self.contains('@') && !self.contains('#')",message="must not carry user info or a fragment"
	URL string `json:"url,omitempty"`

	// caBundle verifies url's certificate (PEM); unset means the system
	// roots. A Service's bundle is service.caBundle.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`

	// headersFrom names a Secret of the Extension's own namespace whose
	// entries are HTTP headers sent to the server (an API key): each key is a
	// header name, its value the header's value. Allowed only for an
	// Extension of a platform namespace, and only over HTTPS (a url, or a
	// service without scheme HTTP). The manager sends them on its
	// discovery requests; hostd fetches them from the manager with its
	// pod-bound token for each call. They never reach the published context,
	// the status, Events or logs (docs/security.md).
	// +optional
	HeadersFrom *MCPHeadersSource `json:"headersFrom,omitempty"`

	// tools selects which of the server's tools the extension registers, and
	// the names agents know them by.
	// +required
	Tools MCPToolSelection `json:"tools"`

	// timeoutSeconds bounds one tool call, from the request to the last
	// byte of the answer, and one discovery request.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// output bounds one answer of each of the server's tools, as a
	// declared tool's output does.
	// +optional
	Output *ToolOutput `json:"output,omitempty"`

	// executionMode Serial makes hostd run one call of each of the
	// server's tools at a time (a server that cannot take concurrent calls
	// of a tool); Parallel (the default) lets them overlap.
	// +optional
	ExecutionMode ExecutionMode `json:"executionMode,omitempty"`
}

// MCPHeadersSource is where an MCP server's request headers come from.
type MCPHeadersSource struct {
	// secretRef is the Secret, in the Extension's namespace.
	// +required
	SecretRef MCPHeadersSecretRef `json:"secretRef"`

	// keys selects the Secret's entries sent as headers; unset means every
	// entry. A key the Secret lacks fails discovery and every call.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_.]*$`
	Keys []string `json:"keys,omitempty"`
}

// MCPHeadersSecretRef names a Secret of the Extension's namespace.
type MCPHeadersSecretRef struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// MCPServiceReference is a Service port and path serving an MCP endpoint.
//
// +kubebuilder:validation:XValidation:rule="!has(self.caBundle) || !has(self.scheme) || self.scheme == 'HTTPS'",message="caBundle needs scheme HTTPS; plain HTTP cannot verify a certificate"
type MCPServiceReference struct {
	// namespace of the Service; unset means the Extension's own.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`

	// name of the Service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// port of the Service.
	// +optional
	// +kubebuilder:default=443
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// path of the MCP endpoint, starting with '/'.
	// +optional
	// +kubebuilder:default="/mcp"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must start with '/'"
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '..')",message="must not contain a '..' segment"
	Path string `json:"path,omitempty"`

	// scheme is HTTPS (the default) or HTTP; plain HTTP only when set.
	// +optional
	Scheme ServiceScheme `json:"scheme,omitempty"`

	// caBundle verifies the Service's serving certificate (PEM), which must
	// name <name>.<namespace>.svc; unset means the system roots.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle []byte `json:"caBundle,omitempty"`
}

// MCPToolSelection is which of an MCP server's tools an extension carries.
//
// +kubebuilder:validation:XValidation:rule="!has(self.pins) || self.pins.all(p, p.name in self.allow)",message="each pin must name a tool in allow"
type MCPToolSelection struct {
	// allow lists the server's tools (by the server's names) the extension
	// registers. A tool not listed is neither listed to agents nor callable.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	Allow []string `json:"allow"`

	// prefix is put before each tool's name, so the names stay unique across
	// the Workspace's tools (github_ makes create_issue github_create_issue).
	// The prefixed name must be a valid tool name (a letter or underscore,
	// then letters, digits, underscores or hyphens, at most 64 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	Prefix string `json:"prefix,omitempty"`

	// Pins: the reviewed definitions. Kept in their own block.

	// pins fix each listed tool's definition (name, description, input and
	// output schema, annotations) by digest, as `loadout mcp pin` writes
	// them: a discovery that finds a pinned tool changed refuses the change
	// (onDrift), so accepting it is a reviewed change of this list. A tool
	// without a pin is served as discovered.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Pins []MCPToolPin `json:"pins,omitempty"`

	// onDrift is what a discovery that finds a pinned tool changed does:
	// KeepPinned (the default) keeps serving the last discovered definition
	// that matched the pin (none yet: the tool is not served); BlockTool
	// stops serving the tool until the pin or the server changes. Either
	// way the ToolsPinned condition and a Warning Event name the tool and
	// the difference.
	// +optional
	// +kubebuilder:default=KeepPinned
	OnDrift MCPDriftPolicy `json:"onDrift,omitempty"`
}

// MCPToolPin is the digest of one reviewed tool definition.
type MCPToolPin struct {
	// name of the tool on the server; it must be in allow.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// digest is sha256 over the tool's canonical definition
	// (docs/concepts.md, "Pinned MCP tools"): sha256:<64 hex digits>.
	// +required
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	Digest string `json:"digest"`
}

// MCPDriftPolicy is what a pinned tool's changed definition does.
// +kubebuilder:validation:Enum=KeepPinned;BlockTool
type MCPDriftPolicy string

const (
	// DriftKeepPinned serves the last definition that matched the pin.
	DriftKeepPinned MCPDriftPolicy = "KeepPinned"
	// DriftBlockTool serves the tool no more.
	DriftBlockTool MCPDriftPolicy = "BlockTool"
)

// MCPServerStatus is what the manager last discovered on spec.mcpServer.
// A failed discovery keeps the last good list (the ToolsDiscovered
// condition says why it is not current).
type MCPServerStatus struct {
	// endpoint is the URL the tools were discovered at. Tools discovered at
	// another endpoint than spec.mcpServer's never load.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Endpoint string `json:"endpoint,omitempty"`

	// server is the name and version the server reported.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Server string `json:"server,omitempty"`

	// tools discovered and allowed, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Tools []DiscoveredTool `json:"tools,omitempty"`
}

// DiscoveredTool is one MCP server tool as the extension registers it.
type DiscoveredTool struct {
	// name as agents call it: spec.mcpServer.tools.prefix and the server's
	// name.
	// +required
	Name ToolName `json:"name"`

	// serverName is the tool's name on the server.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ServerName string `json:"serverName"`

	// description the server gave, cut to 1024 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// inputSchema the server gave.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	InputSchema *runtime.RawExtension `json:"inputSchema,omitempty"`

	// annotations are the server's hints about the tool.
	// +optional
	Annotations *MCPToolAnnotations `json:"annotations,omitempty"`

	// outputSchema the server gave (part of the pinned
	// definition).
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	OutputSchema *runtime.RawExtension `json:"outputSchema,omitempty"`

	// digest is sha256 over this definition as a pin states it: the tool is
	// served only while it equals the tool's pin, if it has one.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	Digest string `json:"digest,omitempty"`
}

// MCPToolAnnotations are MCP's tool hints. They are the server's claims:
// policy never trusts them.
type MCPToolAnnotations struct {
	// title is a human-readable name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Title string `json:"title,omitempty"`
	// readOnlyHint: the tool changes nothing.
	// +optional
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
	// destructiveHint: the tool may destroy data (meaningful when not read-only).
	// +optional
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// idempotentHint: repeating a call has no further effect.
	// +optional
	IdempotentHint bool `json:"idempotentHint,omitempty"`
	// openWorldHint: the tool reaches outside systems.
	// +optional
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}
