package v1alpha1

import (
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ExtensionSpec declares the tools, tool-call hooks, message types and prompt
// guide of an extension. Extensions are code: they load only where trusted.
//
// +kubebuilder:validation:XValidation:rule="!has(self.tools) || self.tools.all(t, self.tools.exists_one(u, u.name == t.name))",message="tool names must be unique within an extension"
// +kubebuilder:validation:XValidation:rule="!has(self.hooks) || self.hooks.all(h, self.hooks.exists_one(i, i.name == h.name))",message="hook names must be unique within an extension"
// +kubebuilder:validation:XValidation:rule="!has(self.messageTypes) || self.messageTypes.all(m, self.messageTypes.exists_one(n, n.type == m.type))",message="message types must be unique within an extension"
// +kubebuilder:validation:XValidation:rule="!has(self.mcpServer) || !has(self.source)",message="mcpServer and source are exclusive: a manifest cannot name an MCP server"
// +kubebuilder:validation:XValidation:rule="!has(self.optional) || !self.optional || ((!has(self.hooks) || size(self.hooks) == 0) && (!has(self.deniedTools) || size(self.deniedTools) == 0) && !has(self.sandbox) && !has(self.source))",message="an optional extension may carry tools but no hooks, no deniedTools, no sandbox and no source: policy is never optional"
// +kubebuilder:validation:XValidation:rule="!has(self.optional) || !self.optional || !has(self.contentRules) || size(self.contentRules) == 0",message="an optional extension carries no contentRules: policy is never optional"
// +kubebuilder:validation:XValidation:rule="!has(self.optional) || !self.optional || !has(self.skillSigners)",message="an optional extension carries no skillSigners: policy is never optional"
type ExtensionSpec struct {
	// name is the extension id. Defaults to metadata.name, which must then follow
	// the same rules.
	// +optional
	Name LogicalName `json:"name,omitempty"`

	// description says what the extension is for.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// promptGuide is appended to the system prompt's tools section.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	PromptGuide string `json:"promptGuide,omitempty"`

	// tools the extension registers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Tools []ExtensionTool `json:"tools,omitempty"`

	// hooks run at the events of a session (docs/hooks.md), in the order
	// listed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Hooks []ExtensionHook `json:"hooks,omitempty"`

	// messageTypes are custom message types the extension emits, and whether
	// each enters the model's context.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MessageTypes []MessageType `json:"messageTypes,omitempty"`

	// paramRef names the ConfigMap the hooks read as params (docs/hooks.md,
	// "Parameters"): one expression, a value per namespace.
	// +optional
	ParamRef *ParamRef `json:"paramRef,omitempty"`

	// source, when set, is a Service in this namespace that serves the extension's
	// manifest. It is contacted only if the extension is trusted.
	// +optional
	Source *ExtensionSource `json:"source,omitempty"`

	// mcpServer, when set, is an MCP server (streamable HTTP) whose allowed
	// tools the extension registers: the manager lists them into
	// status.mcpServer, and hostd runs each call through the Workspace's
	// hooks to the server (docs/agents.md). Contacted only if the extension
	// is trusted.
	// +optional
	MCPServer *MCPServer `json:"mcpServer,omitempty"`

	// deniedTools are tools no agent of a Workspace this extension applies to
	// may call, built-in or from any extension: names or tool classes, compared
	// case-insensitively, as in a hook's match.tools. A deny list is policy
	// like a hook: a Workspace's own spec.tools.deny can only add to it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	DeniedTools []ToolName `json:"deniedTools,omitempty"`

	// sandbox is what the kernel holds the agents of a Workspace this
	// extension applies to (docs/security.md, "Sandbox"). Policy like
	// deniedTools: the sandboxes of the imposed platform extensions
	// intersect, and a tenant's (a Workspace's spec.sandbox, an extension
	// of its own namespace) can only narrow theirs.
	// +optional
	Sandbox *Sandbox `json:"sandbox,omitempty"`

	// namespaceSelector, for an extension in a platform namespace, selects the
	// project namespaces whose Workspaces it applies to, whatever their roots
	// say. Unset, it applies to every namespace. Ignored outside platform
	// namespaces.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// recordArguments writes the arguments of each tool call (and the text of
	// each prompt) this extension's hooks judge into hostd's decision ledger,
	// as the agent sent them, so `loadout test` can replay the ledger against
	// a policy change. Off, a record holds only their digests: arguments may
	// hold secrets, and the ledger is hostd's log.
	// +optional
	RecordArguments bool `json:"recordArguments,omitempty"`

	// optional, for an extension in a platform namespace, offers it instead of
	// imposing it: it loads only where a Workspace's roots include its
	// namespace and select it. An optional extension may carry tools but no
	// hooks and no denied tools, because policy is never optional.
	// +optional
	Optional bool `json:"optional,omitempty"`

	// Content rules, kept in their own block.

	// contentRules are the platform's rules over what agents read: each
	// Skill a Workspace publishes and each of its tools' descriptions,
	// declared or discovered (docs/concepts.md, "Content rules"). Honoured
	// only on an imposed Extension of a platform namespace; elsewhere the
	// Valid condition says they are ignored.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	ContentRules []ContentRule `json:"contentRules,omitempty"`

	// skillSigners says who must have signed the OCI skills of a Workspace
	// this extension applies to (docs/security.md, "Signed skills"). On an
	// imposed extension of a platform namespace it is the platform's
	// requirement; on a tenant's it is one more: every declaration must be
	// met.
	// +optional
	SkillSigners *SkillSigners `json:"skillSigners,omitempty"`
}

// ExtensionTool is a tool an extension registers.
//
// +kubebuilder:validation:XValidation:rule="!self.description.lowerAscii().matches('(^|[^a-z0-9_])((this|that)[ \\t\\n]+tool|(use|call|invoke)[ \\t\\n]+(this|me))([^a-z0-9_]|$)')",message="description must say what the tool does in its own words (Record a review note.), never 'this tool' or 'use this': in the system prompt's list of tools the model cannot tell which tool 'this' is"
type ExtensionTool struct {
	// name of the tool as agents call it. It must not collide with any other
	// tool of the Workspace, built-in tools included.
	// +required
	Name ToolName `json:"name"`

	// description tells the model what the tool does. It enters the system prompt.
	// +required
	Description Description `json:"description"`

	// inputSchema is the JSON Schema (type: object) of the tool's arguments.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	InputSchema *runtime.RawExtension `json:"inputSchema,omitempty"`

	// readOnly marks a tool that changes nothing.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
	// destructive marks a tool that may destroy data (MCP's
	// destructiveHint; meaningful when not read-only). Unset says nothing.
	// +optional
	Destructive *bool `json:"destructive,omitempty"`
	// idempotent marks a tool whose repeated call has no further effect
	// (MCP's idempotentHint).
	// +optional
	Idempotent bool `json:"idempotent,omitempty"`
	// openWorld marks a tool that reaches systems outside the Workspace
	// (MCP's openWorldHint). Unset says nothing.
	// +optional
	OpenWorld *bool `json:"openWorld,omitempty"`

	// output bounds one answer of a runnable tool (docs/hostd.md, "Tool
	// output"). Unset, an answer is bounded only by hostd's 1 MiB.
	// +optional
	Output *ToolOutput `json:"output,omitempty"`
	// executionMode Serial makes hostd run one call of a runnable tool at a
	// time, and tells agents that schedule tools; Parallel (the default)
	// lets calls overlap.
	// +optional
	ExecutionMode ExecutionMode `json:"executionMode,omitempty"`
	// implementation, when set, makes the tool runnable: hostd validates each
	// call's arguments against inputSchema, runs the before hooks, calls this
	// Service, and runs the after hooks (POST /v1/tools/{name} and its MCP
	// server). Without it the tool is a declaration the agent runs itself.
	// +optional
	Implementation *ToolImplementation `json:"implementation,omitempty"`
}

// ToolImplementation is the Service that runs a tool. The same reference rules
// as for webhook hooks apply: a Service in the extension's own namespace, and
// nothing else is ever called.
type ToolImplementation struct {
	// service that runs the tool: hostd POSTs a ToolInvocation to it.
	// +required
	Service ServiceReference `json:"service"`
	// timeoutSeconds bounds one call of the tool, from the request to the
	// last byte of the answer.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}

// ExtensionHook is a policy hook at one event of a session. Exactly one of
// cel and webhook is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.cel) != has(self.webhook)",message="exactly one of cel or webhook must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.match) || self.event in ['BeforeToolCall', 'AfterToolResult', 'ToolFailure']",message="match applies to tool events only (BeforeToolCall, AfterToolResult, ToolFailure)"
// +kubebuilder:validation:XValidation:rule="!has(self.approval) || self.event == 'BeforeToolCall'",message="approval applies to BeforeToolCall hooks only (the event whose hooks ask about a call)"
type ExtensionHook struct {
	// name of the hook, unique within the extension; diagnostics name it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	Name string `json:"name"`

	// event is when the hook runs; docs/hooks.md lists the events.
	// +required
	Event vocab.HookEvent `json:"event"`

	// match limits a tool event's hook to some tools. Unset, it runs for
	// every tool.
	// +optional
	Match *HookMatch `json:"match,omitempty"`

	// timeoutSeconds bounds how long the host waits for the hook.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// cel is an in-process policy in the style of ValidatingAdmissionPolicy.
	// +optional
	CEL *CELHook `json:"cel,omitempty"`

	// webhook calls a Service of the extension's own namespace with JSON.
	// +optional
	Webhook *WebhookHook `json:"webhook,omitempty"`

	// approval sends the hook's asks to the approver groups as Approval
	// objects (docs/hooks.md, "Approvals"); honoured on an imposed
	// extension only.
	// +optional
	Approval *HookApproval `json:"approval,omitempty"`
}

// HookMatch selects the tool calls a hook sees.
type HookMatch struct {
	// tools the hook runs for: tool names as the agent reports them, or tool
	// classes (shell, read, write, edit, search, web) that stand for every
	// agent's tools of the class (docs/agents.md). Compared case-insensitively.
	// Empty means every tool.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	Tools []ToolName `json:"tools,omitempty"`
}

// CELHook is a CEL policy. Variables depend on the event (docs/hooks.md):
// call (id, name, arguments) and result for tool events, prompt (text,
// source), turn, model, response and stop for the others; workspace (name,
// namespace), session (id, reason, agent, agentId, agentType), cwd and
// params always.
type CELHook struct {
	// expression evaluates to a bool (true allows, false denies) or to a map
	// of outcomes with optional keys allow, message, ask, arguments, input,
	// context, summary and customMessage; each event allows some of them
	// (docs/hooks.md).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`

	// message explains a denial to the agent.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// WebhookHook calls a Service in the extension's own namespace.
type WebhookHook struct {
	// service to call.
	// +required
	Service ServiceReference `json:"service"`
}

// MessageType is a custom message type and its context projection rule.
type MessageType struct {
	// type names the message type.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._/-]*$`
	Type string `json:"type"`

	// inContext says whether messages of this type enter the model's context.
	// +optional
	InContext bool `json:"inContext,omitempty"`

	// template is how a message of this type reads to the model, with
	// {{content}} where the message's content goes (the only placeholder).
	// Unset, the model reads the content as it is.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Template string `json:"template,omitempty"`
}

// ParamRef names the ConfigMap whose data an Extension's hooks read as
// `params` (CEL) and in their review (webhooks), resolved for each
// Workspace, as a ValidatingAdmissionPolicyBinding's paramRef.
type ParamRef struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// from says whose namespace holds the ConfigMap: Workspace (the
	// namespace of each Workspace the extension applies to: the tenant's
	// own values, which the tenant may edit) or Extension (the extension's
	// own namespace: values only the extension's owner may edit).
	// +optional
	// +kubebuilder:default=Workspace
	From ParamSource `json:"from,omitempty"`

	// parameterNotFoundAction is what the hooks do when the ConfigMap does
	// not exist: Deny fails them (closed at the blocking events), Allow
	// skips them.
	// +optional
	// +kubebuilder:default=Deny
	ParameterNotFoundAction vocab.ParameterNotFoundAction `json:"parameterNotFoundAction,omitempty"`
}

// ParamSource is whose namespace holds an Extension's params ConfigMap.
// +kubebuilder:validation:Enum=Workspace;Extension
type ParamSource string

const (
	// ParamsFromWorkspace reads the ConfigMap in each Workspace's namespace.
	ParamsFromWorkspace ParamSource = "Workspace"
	// ParamsFromExtension reads the ConfigMap in the Extension's namespace.
	ParamsFromExtension ParamSource = "Extension"
)

// ExtensionSource says where a service-backed extension's manifest comes from.
type ExtensionSource struct {
	// service in this namespace serving the manifest as JSON at its path.
	// +required
	Service ServiceReference `json:"service"`
}

// ExtensionStatus reports whether the Extension compiled.
type ExtensionStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Valid, and ToolsDiscovered for an Extension with
	// spec.mcpServer.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// mcpServer is what the manager last discovered on spec.mcpServer.
	// +optional
	MCPServer *MCPServerStatus `json:"mcpServer,omitempty"`
}

// Extension registers tools and policy hooks at the events of a session.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ext,categories=loadout
// +kubebuilder:printcolumn:name="Extension",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Tools Discovered",type=string,JSONPath=`.status.conditions[?(@.type=="ToolsDiscovered")].reason`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || (self.metadata.name.size() <= 64 && self.metadata.name.matches('^[a-z0-9]([a-z0-9-]*[a-z0-9])?$') && !self.metadata.name.contains('--'))",message="spec.name is unset, so metadata.name must be a valid extension name (1-64 of [a-z0-9-], no leading, trailing or double hyphen)"
type Extension struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the extension.
	// +required
	Spec ExtensionSpec `json:"spec"`

	// status is written by the controller.
	// +optional
	Status ExtensionStatus `json:"status,omitempty"`
}

// LogicalName returns spec.name, or metadata.name when spec.name is unset.
func (e *Extension) LogicalName() string {
	if e.Spec.Name != "" {
		return string(e.Spec.Name)
	}
	return e.Name
}

// +kubebuilder:object:root=true

// ExtensionList is a list of Extensions.
type ExtensionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Extension `json:"items"`
}
