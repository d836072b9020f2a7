package exthost

import (
	"context"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
)

// ToolCall is one call the agent wants to make. Arguments holds JSON values
// (maps, slices, strings, numbers, booleans, nil).
type ToolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Content is one block of a tool result, in the agent's wire shape. Type is
// text or image, or one of MCP's audio, resource_link and resource (an MCP
// server's tool): URI names a link's or resource's target, Text or Data
// (base64) holds a resource's contents.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// ToolResult is a tool's answer to a call. A blocked call gets a result paired
// with the call: same ToolCallID and ToolName, IsError set, the reason in Details.
type ToolResult struct {
	ToolCallID string         `json:"toolCallId"`
	ToolName   string         `json:"toolName"`
	IsError    bool           `json:"isError"`
	Content    []Content      `json:"content"`
	Details    map[string]any `json:"details,omitempty"`
}

// CoreFunc runs the tool itself. The host calls it at most once per call, and
// only when the permission policy and every before hook allow the call.
type CoreFunc func(ctx context.Context, call ToolCall) (ToolResult, error)

// WorkspaceInfo names the Workspace hooks run for; CEL sees it as `workspace`.
type WorkspaceInfo struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Sandboxed: the context declares a sandbox that holds the agent's
	// filesystem and refuses agents that cannot run under it (SandboxHolds).
	// CEL's `sandboxed` is true where it is and the session's agent runs its
	// commands under it (sandboxedFor): the kernel then holds the floor, and
	// a guard may stop refusing what it cannot read (docs/hooks.md).
	Sandboxed bool `json:"sandboxed,omitempty"`
	// EveryAgentSandboxed: besides, the platform starts every agent under
	// `loadout sandbox` (contract.Sandbox.AgentsUnderLoadoutSandbox), so
	// the sandbox holds whatever the agent.
	EveryAgentSandboxed bool `json:"everyAgentSandboxed,omitempty"`
}

// SandboxHolds reports whether s holds the agent's filesystem whatever it
// runs: declared with filesystem rights, and no agent runs without it.
func SandboxHolds(s *contract.Sandbox) bool {
	return s != nil && s.Filesystem != nil && s.UnsandboxedAgents != contract.UnsandboxedAllow
}

// heldAgents are the agents whose every shell command a declared sandbox
// holds, remove rights included: Pi runs bash through `loadout sandbox`,
// Claude Code's Bash runs under its bubblewrap with writes denied where
// remove is withheld (docs/agents.md, "Sandbox"). Codex's workspace-write
// lets it delete in its working directory, so for Codex (and any agent not
// listed) `sandboxed` stays false and guards keep their fail-closed answers,
// unless the platform starts every agent under `loadout sandbox`.
var heldAgents = []string{"pi", "claude-code"}

// sandboxedFor is `sandboxed` for a session: the Workspace's sandbox holds
// and the session's agent runs its commands under it.
func sandboxedFor(ws WorkspaceInfo, s SessionInfo) bool {
	return ws.Sandboxed && (ws.EveryAgentSandboxed || slices.Contains(heldAgents, s.Agent))
}

// SessionInfo is the agent session an event belongs to; every hook sees it
// as `session`. Reason says why the event fired, in the agent's words
// (startup, resume, quit, manual, threshold…); it may be empty. Agent is
// the agent (pi, claude-code, codex); AgentID and AgentType name the agent
// or subagent that acts where the agent sends them (Claude Code's and
// Codex's subagents), and are empty for the main agent.
type SessionInfo struct {
	ID        string `json:"id,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Agent     string `json:"agent,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
	AgentType string `json:"agentType,omitempty"`
}

// Prompt is the user's prompt at UserInput (as typed) and BeforeAgentStart
// (as sent, templates rendered); CEL sees it as `prompt`.
type Prompt struct {
	Text string `json:"text"`
	// Source is where the prompt came from (interactive, rpc, …); may be empty.
	Source string `json:"source,omitempty"`
}

// DiagnosticKind classifies a Diagnostic.
type DiagnosticKind string

const (
	// DiagnosticError: the hook returned an error or panicked.
	DiagnosticError DiagnosticKind = "error"
	// DiagnosticTimeout: the host stopped waiting for the hook.
	DiagnosticTimeout DiagnosticKind = "timeout"
	// DiagnosticAudit: an after hook's policy did not hold for the result. After
	// hooks only observe, so a violation is reported, never enforced.
	DiagnosticAudit DiagnosticKind = "audit"
)

// Diagnostic is an explicit event for an extension's failure (rule R-HK-8).
// A denial is a policy decision, not a failure, and produces none.
type Diagnostic struct {
	ExtensionID string         `json:"extensionId"`
	Hook        string         `json:"hook"`
	Kind        DiagnosticKind `json:"kind"`
	Message     string         `json:"message"`
}

// Tool is what an extension author registers. The host adds the extension id
// when it publishes the tool.
type Tool struct {
	Name        string
	Description string
	ReadOnly    bool
	// InputSchema is a JSON Schema document with type object; nil means none.
	InputSchema []byte
	// Service, when set, runs the tool (hostd's /v1/tools/{name}); nil means
	// the tool is a declaration the agent runs itself.
	Service *contract.ToolService
	// MCP, when set, runs the tool on an MCP server (hostd's
	// /v1/tools/{name}, like Service).
	MCP *contract.ToolMCP
	// Traits are its hints, answer limit and execution mode.
	Traits contract.ToolTraits
}

func (t Tool) contract(extension string) contract.Tool {
	return contract.Tool{
		Name:        t.Name,
		Description: t.Description,
		Extension:   extension,
		ReadOnly:    t.ReadOnly,
		InputSchema: cloneBytes(t.InputSchema),
		Service:     cloneService(t.Service),
		MCP:         cloneMCP(t.MCP),
		ToolTraits:  t.Traits.Clone(),
	}
}

func cloneService(s *contract.ToolService) *contract.ToolService {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func cloneMCP(m *contract.ToolMCP) *contract.ToolMCP {
	if m == nil {
		return nil
	}
	c := *m
	c.CABundle = cloneBytes(m.CABundle)
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
