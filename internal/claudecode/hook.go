package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// Claude Code's hook events this package acts on (Codex sends the same names
// for the ones it has). Every other event is answered with an empty object:
// no decision, nothing added.
const (
	SessionStart       = "SessionStart"
	UserPromptSubmit   = "UserPromptSubmit"
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	PreCompact         = "PreCompact"
	SessionEnd         = "SessionEnd"
	// PreModelRequest is Codex's, before each model request (Claude Code
	// has none); it is Loadout's BeforeModelRequest.
	PreModelRequest = "PreModelRequest"
	// Stop fires when the agent is about to end its turn, SubagentStop when
	// a subagent is; both are Loadout's Stop.
	Stop         = "Stop"
	SubagentStop = "SubagentStop"
)

// Permission decisions of a PreToolUse answer.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	DecisionAsk   = "ask"
)

// MaxInput bounds the hook input. A tool's input (a file Claude Code writes)
// can be large; hostd accepts calls up to 1 MiB.
const MaxInput = 4 << 20

// Input is Claude Code's hook input (the fields this package reads).
type Input struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     map[string]any  `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
	// Error is PostToolUseFailure's description of the failure.
	Error string `json:"error"`
	// Prompt is UserPromptSubmit's prompt, as the user typed it.
	Prompt string `json:"prompt"`
	// Source is why SessionStart fired (startup, resume, clear, compact).
	Source string `json:"source"`
	// Trigger is why PreCompact fired (manual, auto).
	Trigger string `json:"trigger"`
	// Reason is why SessionEnd fired (clear, logout, prompt_input_exit, other).
	Reason string `json:"reason"`
	// Model is the model of Codex's PreModelRequest.
	Model string `json:"model"`
	// Cwd is the agent's working directory; AgentID and AgentType name the
	// subagent a hook fires in (absent for the main agent).
	Cwd       string `json:"cwd"`
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// StopHookActive (Stop) says the agent is already going on because a
	// Stop hook blocked; LastAssistantMessage is its last text.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
}

// Output is a hook answer in Claude Code's documented shape. The empty
// Output ({}) is a valid answer to every event and decides nothing.
type Output struct {
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
	// Decision "block" with Reason blocks whatever the event guards; it is
	// the answer to input whose event cannot be read, because a
	// hookSpecificOutput naming the wrong event is an error to Claude Code.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// SystemMessage is shown to the user (after hooks' diagnostics).
	SystemMessage string `json:"systemMessage,omitempty"`
}

// SpecificOutput is hookSpecificOutput.
type SpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput is the rewritten tool input of a PreToolUse.
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
	// AdditionalContext is text for the model (SessionStart,
	// UserPromptSubmit).
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Policy is the Workspace's policy as the hook asks it: hostd's hooks, over
// HTTP (HostdClient) or in process (hostd's http hook endpoint).
type Policy interface {
	// Before decides a tool call. The caller applies a rewrite: the
	// verdict's Arguments are what runs.
	Before(ctx context.Context, call exthost.ToolCall) (BeforeVerdict, error)
	// After reports a result to the after hooks (and, for an error, the
	// ToolFailure hooks) and returns their diagnostics.
	After(ctx context.Context, call exthost.ToolCall, result exthost.ToolResult) ([]exthost.Diagnostic, error)
	// Event runs the hooks of a session event (SessionStart, UserInput,
	// BeforeAgentStart, BeforeCompact, SessionEnd).
	Event(ctx context.Context, req exthost.EventRequest) (exthost.EventOutcome, error)
}

// BeforeVerdict is the before hooks' decision on a call: Blocked nil runs
// it, with Arguments when a hook rewrote them; Ask says Blocked is a
// question for the user.
type BeforeVerdict struct {
	Blocked   *exthost.ToolResult
	Ask       bool
	Arguments map[string]any
}

// Hook answers Claude Code's hook events from a Policy.
type Hook struct {
	Policy Policy
	// MCPServer is the name hostd's MCP server has in Claude Code's MCP
	// configuration; its tools (mcp__<MCPServer>__<tool>) go to the policy
	// under their registry names.
	MCPServer string
	// Agent names the agent in every hook's session.agent; empty means
	// claude-code.
	Agent string
	// AutoAllow answers an allowed call with permissionDecision "allow",
	// which skips Claude Code's own permission prompt. By default an allowed
	// call carries no decision: the Workspace can only narrow what Claude
	// Code's own rules and prompts permit, never widen it.
	AutoAllow bool
}

// AnswerJSON reads one hook input and answers it. It never fails: input
// that cannot be read is blocked with the reason.
func (h Hook) AnswerJSON(ctx context.Context, r io.Reader) Output {
	in, err := ReadInput(r)
	if err != nil {
		return Block(fmt.Sprintf("Loadout could not read the hook input (%v); the call is blocked", err), in.HookEventName)
	}
	return h.Answer(ctx, in)
}

// Answer answers one hook input in Claude Code's shape (see Decide).
func (h Hook) Answer(ctx context.Context, in Input) Output {
	return h.Decide(ctx, in).ClaudeCode()
}

// ToolName maps a Claude Code tool name to the name the Workspace's registry,
// match.tools and tools.deny use. Loadout's own MCP tools arrive as
// mcp__<server>__<tool> and are known by <tool>; every other name (Bash,
// Write, mcp__github__create_issue) is passed unchanged, so the Workspace
// names them as Claude Code does or by their class.
func (h Hook) ToolName(claude string) string {
	if h.MCPServer != "" {
		if rest, ok := strings.CutPrefix(claude, "mcp__"+h.MCPServer+"__"); ok && rest != "" {
			return rest
		}
	}
	return claude
}

// ownMCPTool reports whether hostd ran the tool itself through its MCP
// endpoint, after hooks included.
func (h Hook) ownMCPTool(claude string) bool { return h.ToolName(claude) != claude }

func (h Hook) call(in Input) exthost.ToolCall {
	id := in.ToolUseID
	if id == "" {
		id = "claude-code" // hostd requires one; Claude Code always sends it
	}
	return exthost.ToolCall{ID: id, Name: h.ToolName(in.ToolName), Arguments: in.ToolInput}
}

// ReadInput reads one hook input of at most MaxInput bytes. On error the
// returned Input still carries the event name when it could be read.
func ReadInput(r io.Reader) (Input, error) {
	var in Input
	raw, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return in, err
	}
	if len(raw) > MaxInput {
		return in, fmt.Errorf("more than %d bytes", MaxInput)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var ev struct {
			HookEventName string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(raw, &ev)
		return Input{HookEventName: ev.HookEventName}, fmt.Errorf("not a hook input: %w", err)
	}
	if in.HookEventName == "" {
		return in, errors.New("hook_event_name is required")
	}
	return in, nil
}

// Block is the answer to input that cannot be read: a PreToolUse deny when
// the input says it is a PreToolUse, else decision "block", which blocks
// whatever the event guards without naming an event.
func Block(reason, event string) Output {
	if event == PreToolUse {
		return deny(reason)
	}
	return Output{Decision: "block", Reason: reason}
}

func deny(reason string) Output {
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: DecisionDeny, PermissionDecisionReason: reason}}
}

// ResultText is the text of a result's content, one line per text block.
func ResultText(r exthost.ToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// responseResult is PostToolUse's tool_response as the after hooks' result:
// its text is a JSON string as itself and anything else as its JSON, and an
// object response is also the result's details.
func responseResult(raw json.RawMessage) exthost.ToolResult {
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	result := exthost.ToolResult{Content: []exthost.Content{{Type: "text", Text: text}}}
	var details map[string]any
	if json.Unmarshal(raw, &details) == nil && details != nil {
		result.Details = details
	}
	return result
}
