package contract

import (
	"encoding/json"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Keys of the published ConfigMap's data.
const (
	KeySystemPrompt = "system-prompt.md"
	KeyManifest     = "manifest.json"
	KeySkills       = "skills.json"
	KeyTemplates    = "templates.json"
	// KeySignature holds the manager's signature of the context
	// (internal/contextsig). It is not part of the context hash: the hash
	// is what it signs.
	KeySignature = "signature.json"
)

// APIVersion and Kind identify a manifest.json document.
const (
	APIVersion   = "loadout.dev/v1alpha1"
	ManifestKind = "WorkspaceContext"
)

// HashPrefix starts every context hash.
const HashPrefix = "sha256:"

// Hook events on the wire: the Extension API's, defined once in api/v1alpha1.
const (
	EventSessionStart     = string(vocab.SessionStart)
	EventUserInput        = string(vocab.UserInput)
	EventBeforeAgentStart = string(vocab.BeforeAgentStart)
	EventBeforeToolCall   = string(vocab.BeforeToolCall)
	EventAfterToolResult  = string(vocab.AfterToolResult)
	EventToolFailure      = string(vocab.ToolFailure)
	EventBeforeCompact    = string(vocab.BeforeCompact)
	EventSessionEnd       = string(vocab.SessionEnd)
)

// Manifest is manifest.json: everything an agent needs to know about its
// context except skill and template bodies.
type Manifest struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Workspace  WorkspaceRef `json:"workspace"`
	// Hash is the context hash: "sha256:" and the hex digest over every key's
	// data, this document taken with Hash empty.
	Hash string `json:"hash"`
	// PlatformPolicy is the digest of the platform policy this context
	// carries ("sha256:" and hex; workspace.PlatformPolicyDigest): the
	// hooks, message types and prompt guides of the imposed platform
	// extensions and the platform's denied tools. hostd given the
	// namespace's policy epoch (PolicyEpoch) serves the context only while
	// the epoch names this digest. Empty in a deny-all context, which
	// carries no platform policy.
	PlatformPolicy string `json:"platformPolicy,omitempty"`
	// Instructions are the origins of the instructions, in the order their
	// bodies open system-prompt.md.
	Instructions []string `json:"instructions"`
	// InstructionSources say where each instruction came from and where its
	// body is in system-prompt.md, in the order of Instructions. An agent
	// side slices the bodies out by these ranges; it never re-derives them
	// from the rest of the prompt.
	InstructionSources []InstructionSource `json:"instructionSources"`
	// InstructionsLength is the byte length of the instructions at the head
	// of system-prompt.md, every body and the blank lines between them; the
	// rest of the prompt starts after the blank line that follows them.
	InstructionsLength int            `json:"instructionsLength"`
	Catalog            []CatalogEntry `json:"catalog"`
	Shadowed           []Shadowed     `json:"shadowed"`
	ActiveSkills       []ActiveSkill  `json:"activeSkills"`
	Templates          []TemplateInfo `json:"templates"`
	Commands           []Command      `json:"commands"`
	Registry
}

// WorkspaceRef names the Workspace a context belongs to. It carries no
// metadata.generation: the context depends on the inputs only, so `loadout
// preview` computes the same bytes and hash as the cluster publishes.
type WorkspaceRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Authorities of context text (Provenance.Authority). Platform text comes
// from a platform namespace and may be given to an agent as organisation
// policy; project text (a tenant's namespace, a directory root) is project
// content only, whatever it says about itself.
const (
	AuthorityPlatform = "platform"
	AuthorityProject  = "project"
)

// Kinds of objects a Provenance names.
const (
	ProvenanceWorkspace = "Workspace" // an inline instruction: Key is its field
	ProvenanceConfigMap = "ConfigMap" // an instructions ConfigMap: Key is its key
	ProvenanceObject    = "Object"    // a Skill or Template object
	ProvenanceFile      = "File"      // a file of a directory root: Name is its path
	ProvenanceExtension = "Extension" // an extension's prompt guide: Name is its id
)

// Provenance says where one part of the context came from.
type Provenance struct {
	// Authority is AuthorityPlatform or AuthorityProject.
	Authority string `json:"authority"`
	// Namespace is the object's namespace; empty for a directory root.
	Namespace string `json:"namespace,omitempty"`
	// Kind is one of the Provenance* kinds.
	Kind string `json:"kind"`
	// Name is the object's name (a file's path in its root, an extension's
	// id).
	Name string `json:"name"`
	// Key is the ConfigMap key or the Workspace field the text is in.
	Key string `json:"key,omitempty"`
	// Root is the name of the root a skill, template or file came from.
	Root string `json:"root,omitempty"`
}

// Platform reports whether the text has the platform's authority.
func (p Provenance) Platform() bool { return p.Authority == AuthorityPlatform }

// InstructionSource is one instruction of system-prompt.md: where it came
// from and the byte range of its body in the prompt (its text without the
// newlines around it; Length 0 for an empty one).
type InstructionSource struct {
	Origin     string     `json:"origin"`
	Provenance Provenance `json:"provenance"`
	Offset     int        `json:"offset"`
	Length     int        `json:"length"`
}

// Slice returns the instruction's body in prompt, or false when its range
// is not inside prompt.
func (s InstructionSource) Slice(prompt string) (string, bool) {
	if s.Offset < 0 || s.Length < 0 || s.Offset > len(prompt) || s.Length > len(prompt)-s.Offset {
		return "", false
	}
	return prompt[s.Offset : s.Offset+s.Length], true
}

// CatalogEntry is a winning skill or template: metadata only, never a body.
type CatalogEntry struct {
	Kind        string     `json:"kind"`
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Origin      string     `json:"origin"`
	Provenance  Provenance `json:"provenance"`
}

// Shadowed is a resource that lost to a same-named one in an earlier root.
type Shadowed struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Origin     string `json:"origin"`
	ShadowedBy string `json:"shadowedBy"`
}

// ActiveSkill is a skill whose body is in the system prompt, with the files
// requested for it.
type ActiveSkill struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// TemplateInfo describes a winning template.
type TemplateInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Variables   []string `json:"variables"`
}

// Command is a slash command backed by a template.
type Command struct {
	Name        string `json:"name"`
	Template    string `json:"template"`
	Description string `json:"description,omitempty"`
}

// Registry is the tool registry: tools, hooks, message types and prompt guides
// of the built-in tools and the loaded extensions, in registration order.
type Registry struct {
	Tools        []Tool        `json:"tools"`
	Hooks        []Hook        `json:"hooks"`
	MessageTypes []MessageType `json:"messageTypes"`
	PromptGuides []PromptGuide `json:"promptGuides"`
	// Extensions are the ids of the committed extensions in commit order, so a
	// reader (hostd) can rebuild the hook runtime in the same order.
	Extensions []string `json:"extensions,omitempty"`
	// Deny lists the tools the Workspace denies, built-in or from an extension
	// (rule R-EXT-5); hostd refuses them before any hook runs.
	Deny []string `json:"deny,omitempty"`
	// Sandbox, when set, is what the kernel holds every agent of the
	// Workspace to (docs/security.md, "Sandbox"): the platform's declared
	// sandbox, narrowed by the tenant's.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// SkillSigners, when set, says who must have signed the Workspace's OCI
	// skills (signers.go): the agent side refuses an OCI skill that does not
	// meet every requirement, and every git skill.
	SkillSigners []SignerRequirement `json:"skillSigners,omitempty"`
}

// Tool is one tool the agent may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Extension   string          `json:"extension,omitempty"`
	Builtin     bool            `json:"builtin,omitempty"`
	ReadOnly    bool            `json:"readOnly,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Service, when set, runs the tool: the tool is runnable through hostd
	// (POST /v1/tools/{name} and its MCP server). A tool without it is a
	// declaration the agent runs itself.
	Service *ToolService `json:"service,omitempty"`
	// MCP, when set, runs the tool on an MCP server (streamable HTTP): the
	// tool is runnable through hostd like one with a Service.
	MCP *ToolMCP `json:"mcp,omitempty"`
	ToolTraits
}

// ToolTraits are how a tool behaves beyond what it is: its hints, its
// answer limit and whether its calls may overlap.
type ToolTraits struct {
	// Destructive, Idempotent and OpenWorld are the tool's hints beyond
	// ReadOnly, as MCP names them (destructiveHint, idempotentHint,
	// openWorldHint); nil says nothing. Hints, never policy.
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  bool  `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
	// Output bounds one answer of the tool; nil: hostd's own bound only.
	Output *ToolOutput `json:"output,omitempty"`
	// ExecutionMode is ExecutionSerial for a tool hostd runs one call of at
	// a time; empty means parallel.
	ExecutionMode string `json:"executionMode,omitempty"`
}

// Clone is a deep copy of t.
func (t ToolTraits) Clone() ToolTraits {
	c := t
	if t.Destructive != nil {
		c.Destructive = new(bool)
		*c.Destructive = *t.Destructive
	}
	if t.OpenWorld != nil {
		c.OpenWorld = new(bool)
		*c.OpenWorld = *t.OpenWorld
	}
	if t.Output != nil {
		o := *t.Output
		c.Output = &o
	}
	return c
}

// ExecutionSerial is the ExecutionMode of a tool whose calls never overlap.
const ExecutionSerial = "serial"

// ToolOutput is a tool's answer limit: MaxBytes of content, and what to do
// with more (OverflowTruncate or OverflowRefuse).
type ToolOutput struct {
	MaxBytes   int    `json:"maxBytes"`
	OnOverflow string `json:"onOverflow"`
}

// What hostd does with an answer over a tool's output limit.
const (
	OverflowTruncate = "truncate"
	OverflowRefuse   = "refuse"
)

// ToolMCP is the MCP server a tool's calls go to, resolved by the
// controller from the extension's mcpServer.
type ToolMCP struct {
	URL string `json:"url"`
	// Tool is the tool's name on the server.
	Tool           string `json:"tool"`
	TimeoutSeconds int32  `json:"timeoutSeconds"`
	// CABundle verifies an https URL's certificate; empty means the system roots.
	CABundle []byte `json:"caBundle,omitempty"`
	// External marks a server outside the cluster (a URL): hostd sends it
	// no service token.
	External bool `json:"external,omitempty"`
	// HeadersFrom is "namespace/name" of the Extension whose headersFrom
	// Secret gives the headers of every request to the server: hostd asks
	// the manager for them (never the Secret's values: those are not in the
	// context).
	HeadersFrom string `json:"headersFrom,omitempty"`
}

// ToolService is where a runnable tool's calls go. URL is resolved by the
// controller from the tool's Service reference, always in the extension's own
// namespace, like a webhook hook's.
type ToolService struct {
	URL            string `json:"url"`
	TimeoutSeconds int32  `json:"timeoutSeconds"`
	// CABundle verifies an https URL's certificate; empty means the system roots.
	CABundle []byte `json:"caBundle,omitempty"`
}

// Runnable reports whether hostd can run the tool.
func (t Tool) Runnable() bool { return t.Service != nil || t.MCP != nil }

// Hook is a hook of a loaded extension, at one event (docs/hooks.md).
type Hook struct {
	Extension      string       `json:"extension"`
	Name           string       `json:"name"`
	Event          string       `json:"event"`
	Tools          []string     `json:"tools,omitempty"`
	TimeoutSeconds int32        `json:"timeoutSeconds"`
	CEL            *CELHook     `json:"cel,omitempty"`
	Webhook        *WebhookHook `json:"webhook,omitempty"`
	// Imposed marks a hook of a platform extension imposed on the
	// Workspace. Imposed hooks run after every other hook of their event,
	// so the platform judges the call or prompt as it will run
	// (docs/hooks.md, "Order").
	Imposed bool `json:"imposed,omitempty"`
	// Namespace is the hook's extension's namespace: where the text the
	// hook adds for the model comes from. A hook that is not imposed adds
	// project content from this namespace, never organisation policy
	// (docs/hooks.md, "Where hook text comes from").
	Namespace string `json:"namespace,omitempty"`
	// Approval sends the hook's asks to the cluster's approvers.
	Approval *HookApproval `json:"approval,omitempty"`
	// RecordArguments: the decision ledger records the arguments (or
	// prompt) of what the hook judges (its extension's recordArguments).
	RecordArguments bool `json:"recordArguments,omitempty"`
	// Params are the values of the extension's paramRef, resolved by the
	// controller for the Workspace; nil when the extension has none.
	Params *HookParams `json:"params,omitempty"`
}

// HookParams are a hook's parameters: CEL sees Values as `params`, a
// webhook gets them in its review. From names the ConfigMap
// (namespace/name). Missing, when set, says the ConfigMap was not found and
// what its parameterNotFoundAction makes of the hook: Deny fails it (closed
// for the blocking events), Allow skips it.
type HookParams struct {
	From    string            `json:"from"`
	Values  map[string]string `json:"values,omitempty"`
	Missing string            `json:"missing,omitempty"`
}

// CELHook is an in-process CEL policy: expression true allows.
type CELHook struct {
	Expression string `json:"expression"`
	Message    string `json:"message,omitempty"`
}

// WebhookHook is a hook served over HTTP by the extension's own Service. URL is
// resolved by the controller from the Service reference and always points into
// the extension's namespace.
type WebhookHook struct {
	URL string `json:"url"`
	// CABundle verifies an https URL's certificate (PEM, base64 in JSON);
	// empty means the system roots.
	CABundle []byte `json:"caBundle,omitempty"`
}

// MessageType is a custom message type and whether it enters the model's context.
type MessageType struct {
	Extension string `json:"extension"`
	Type      string `json:"type"`
	InContext bool   `json:"inContext"`
	// Template is how a message of the type reads to the model: its
	// content replaces {{content}}; empty means the content as it is.
	Template string `json:"template,omitempty"`
}

// PromptGuide is an extension's text for the system prompt's tools section.
type PromptGuide struct {
	Extension string `json:"extension"`
	Text      string `json:"text"`
	// Provenance is set in a published manifest: a guide of a platform
	// namespace's extension is platform text, any other guide project text.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Skills is skills.json: the bodies and files of every winning skill, for
// on-demand activation.
type Skills struct {
	Skills []SkillDoc `json:"skills"`
}

// SkillDoc is one winning skill in full.
type SkillDoc struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Origin      string    `json:"origin"`
	Body        string    `json:"body"`
	Files       []FileDoc `json:"files"`
	// License, Compatibility, Metadata and AllowedTools carry the optional
	// Agent Skills fields (rule R-SK-1) to agents unchanged.
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	AllowedTools  []string          `json:"allowedTools,omitempty"`
	// Source, when set, pins the external content of the skill: Body and
	// Files are then empty and the agent side fetches, verifies and
	// materializes SKILL.md and every file (docs/concepts.md).
	Source *SkillSource `json:"source,omitempty"`
}

// SkillSource is the pinned external content of a skill: exactly one of OCI
// and Git is set.
type SkillSource struct {
	OCI *OCISource `json:"oci,omitempty"`
	Git *GitSource `json:"git,omitempty"`
}

// OCISource is an artifact reference pinned by digest
// (REGISTRY/REPOSITORY@sha256:<hex>).
type OCISource struct {
	Reference string `json:"reference"`
}

// GitSource is a directory of a repository at a full commit.
type GitSource struct {
	URL    string `json:"url"`
	Commit string `json:"commit"`
	Path   string `json:"path,omitempty"`
}

// String names the source in diagnostics, metrics and /readyz.
func (s SkillSource) String() string {
	switch {
	case s.OCI != nil:
		return "oci:" + s.OCI.Reference
	case s.Git != nil:
		return "git:" + s.Git.URL + "@" + s.Git.Commit + "/" + s.Git.Path
	}
	return "none"
}

// EncodingBase64 marks a FileDoc whose content is base64: the file is not
// UTF-8 text.
const EncodingBase64 = "base64"

// FileDoc is one extra file of a skill.
type FileDoc struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// Encoding is empty for UTF-8 text and EncodingBase64 for binary files.
	Encoding string `json:"encoding,omitempty"`
	// Executable files are materialized with mode 0755.
	Executable bool `json:"executable,omitempty"`
}

// Templates is templates.json: the bodies of every winning template.
type Templates struct {
	Templates []TemplateDoc `json:"templates"`
}

// TemplateDoc is one winning template in full.
type TemplateDoc struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Origin      string   `json:"origin"`
	Body        string   `json:"body"`
	Variables   []string `json:"variables"`
	// Steps make the template's command a fixed sequence of actions; empty,
	// the command renders Body alone.
	Steps []TemplateStep `json:"steps,omitempty"`
}

// TemplateStep is one action of a command: exactly one of Tool (a call with
// Arguments, whose string values may hold {{var}} placeholders), Render (this
// template's body) or Template (another template's body).
type TemplateStep struct {
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Render    bool            `json:"render,omitempty"`
	Template  string          `json:"template,omitempty"`
}
