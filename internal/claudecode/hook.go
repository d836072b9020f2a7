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

// Claude Code's hook events this package acts on. Every other event is
// answered with an empty object: no decision, nothing added.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
)

// Permission decisions of a PreToolUse answer.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
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
}

// Policy is the Workspace's policy as the hook asks it: hostd's before and
// after hooks, over HTTP (HostdClient) or in process (hostd's http hook
// endpoint).
type Policy interface {
	// Before returns nil when the call may run, else the blocked result
	// whose text is the reason.
	Before(ctx context.Context, call exthost.ToolCall) (*exthost.ToolResult, error)
	// After reports a result to the after hooks and returns their
	// diagnostics.
	After(ctx context.Context, call exthost.ToolCall, result exthost.ToolResult) ([]exthost.Diagnostic, error)
}

// Hook answers Claude Code's hook events from a Policy.
type Hook struct {
	Policy Policy
	// MCPServer is the name hostd's MCP server has in Claude Code's MCP
	// configuration; its tools (mcp__<MCPServer>__<tool>) go to the policy
	// under their registry names.
	MCPServer string
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

// Answer answers one hook input. A PreToolUse the policy cannot decide
// (hostd unreachable, an error) is denied with the reason (rule R-AG-3); PostToolUse and PostToolUseFailure report the result
// to the after hooks, which only observe; every other event gets {}.
func (h Hook) Answer(ctx context.Context, in Input) Output {
	switch in.HookEventName {
	case PreToolUse:
		return h.before(ctx, in)
	case PostToolUse:
		return h.after(ctx, in, responseResult(in.ToolResponse))
	case PostToolUseFailure:
		return h.after(ctx, in, exthost.ToolResult{IsError: true, Content: []exthost.Content{{Type: "text", Text: in.Error}}})
	default:
		return Output{}
	}
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

func (h Hook) before(ctx context.Context, in Input) Output {
	if in.ToolName == "" {
		return deny("Loadout got a PreToolUse without tool_name; the call is blocked")
	}
	if h.Policy == nil {
		return deny("Loadout has no policy to ask; the call is blocked")
	}
	blocked, err := h.Policy.Before(ctx, h.call(in))
	if err != nil {
		return deny(fmt.Sprintf("Loadout could not get a policy decision from hostd (%v); the call is blocked", err))
	}
	if blocked == nil {
		if h.AutoAllow {
			return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: DecisionAllow,
				PermissionDecisionReason: "allowed by the Workspace's Loadout policy"}}
		}
		return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse}}
	}
	reason := ResultText(*blocked)
	if reason == "" {
		reason = "blocked by the Workspace's Loadout policy"
	}
	return deny(reason)
}

// after reports the tool's result to the after hooks. They only observe:
// diagnostics reach the user as a system message, never the model, and a
// failure to reach hostd blocks nothing (the tool already ran). Loadout's own
// MCP tools are skipped: hostd ran their after hooks on the real result.
func (h Hook) after(ctx context.Context, in Input, result exthost.ToolResult) Output {
	if in.ToolName == "" || h.ownMCPTool(in.ToolName) || h.Policy == nil {
		return Output{}
	}
	call := h.call(in)
	result.ToolCallID, result.ToolName = call.ID, call.Name
	diags, err := h.Policy.After(ctx, call, result)
	if err != nil {
		return Output{SystemMessage: fmt.Sprintf("Loadout: the after hooks did not run (%v)", err)}
	}
	var lines []string
	for _, d := range diags {
		lines = append(lines, fmt.Sprintf("%s/%s %s: %s", d.ExtensionID, d.Hook, d.Kind, d.Message))
	}
	if len(lines) == 0 {
		return Output{}
	}
	return Output{SystemMessage: "Loadout after hooks: " + strings.Join(lines, "; ")}
}

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
