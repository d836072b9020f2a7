package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// Claude Code's hook events this hook answers.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// Permission decisions of a PreToolUse answer.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// maxInput bounds the hook input read from stdin. A tool's input (a file
// Claude Code writes) can be large; hostd accepts calls up to 1 MiB.
const maxInput = 4 << 20

// Input is Claude Code's hook input on stdin (the fields this hook reads).
type Input struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     map[string]any  `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
}

// Output is the hook's answer on stdout, in Claude Code's documented shape.
type Output struct {
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user (after hooks' diagnostics).
	SystemMessage string `json:"systemMessage,omitempty"`
}

// SpecificOutput is hookSpecificOutput.
type SpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Hook asks hostd about one Claude Code hook event.
type Hook struct {
	// HostdURL is hostd's base URL, e.g. http://127.0.0.1:8181.
	HostdURL string
	// Client calls hostd; nil means a client bounded by Timeout.
	Client *http.Client
	// Timeout bounds the hostd call. It must stay under the hook's timeout
	// in Claude Code's settings: a hook Claude Code kills lets the call run.
	Timeout time.Duration
	// MCPServer is the name hostd's MCP server has in Claude Code's MCP
	// configuration; its tools (mcp__<MCPServer>__<tool>) go to hostd under
	// their registry names.
	MCPServer string
	// PassOnAllow answers an allowed call without a permission decision, so
	// Claude Code's own permission rules and prompts still decide; by default
	// an allowed call is answered "allow", which skips Claude Code's prompt.
	PassOnAllow bool
}

// Answer reads one hook input and answers it. It never fails: a PreToolUse
// that cannot be answered (unreadable input, hostd unreachable, an error
// answer) is denied with the reason, because failing closed is the point.
func (h Hook) Answer(ctx context.Context, stdin io.Reader) Output {
	in, err := readInput(stdin)
	if err != nil {
		return deny(fmt.Sprintf("Loadout could not read the hook input (%v); the call is blocked", err))
	}
	switch in.HookEventName {
	case PreToolUse:
		return h.before(ctx, in)
	case PostToolUse:
		return h.after(ctx, in)
	default:
		return deny(fmt.Sprintf("Loadout answers PreToolUse and PostToolUse hooks, not %q; the call is blocked", in.HookEventName))
	}
}

// ToolName maps a Claude Code tool name to the name the Workspace's registry,
// match.tools and tools.deny use. Loadout's own MCP tools arrive as
// mcp__<server>__<tool> and are known by <tool>; every other name (Bash,
// Write, mcp__github__create_issue) is passed unchanged, so the Workspace
// names them as Claude Code does.
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
	var resp struct {
		Allowed bool                `json:"allowed"`
		Result  *exthost.ToolResult `json:"result"`
	}
	if err := h.post(ctx, "/v1/before", map[string]any{"call": h.call(in)}, &resp); err != nil {
		return deny(fmt.Sprintf("Loadout could not get a policy decision from hostd (%v); the call is blocked", err))
	}
	if resp.Allowed {
		if h.PassOnAllow {
			return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse}}
		}
		return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: DecisionAllow,
			PermissionDecisionReason: "allowed by the Workspace's Loadout policy"}}
	}
	reason := "blocked by the Workspace's Loadout policy"
	if resp.Result != nil {
		if text := resultText(*resp.Result); text != "" {
			reason = text
		}
	}
	return deny(reason)
}

// after reports the tool's response to the after hooks. They only observe:
// diagnostics reach the user as a system message, never the model, and a
// failure to reach hostd blocks nothing (the tool already ran). Loadout's own
// MCP tools are skipped: hostd ran their after hooks on the real result.
func (h Hook) after(ctx context.Context, in Input) Output {
	out := Output{}
	if h.ownMCPTool(in.ToolName) {
		return out
	}
	call := h.call(in)
	result := exthost.ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: []exthost.Content{{Type: "text", Text: responseText(in.ToolResponse)}}}
	var details map[string]any
	if json.Unmarshal(in.ToolResponse, &details) == nil && details != nil {
		result.Details = details
	}
	var resp struct {
		Diagnostics []exthost.Diagnostic `json:"diagnostics"`
	}
	if err := h.post(ctx, "/v1/after", map[string]any{"call": call, "result": result}, &resp); err != nil {
		out.SystemMessage = fmt.Sprintf("Loadout: the after hooks did not run (%v)", err)
		return out
	}
	var lines []string
	for _, d := range resp.Diagnostics {
		lines = append(lines, fmt.Sprintf("%s/%s %s: %s", d.ExtensionID, d.Hook, d.Kind, d.Message))
	}
	if len(lines) > 0 {
		out.SystemMessage = "Loadout after hooks: " + strings.Join(lines, "; ")
	}
	return out
}

func (h Hook) call(in Input) exthost.ToolCall {
	id := in.ToolUseID
	if id == "" {
		id = "claude-code" // hostd requires one; Claude Code always sends it
	}
	return exthost.ToolCall{ID: id, Name: h.ToolName(in.ToolName), Arguments: in.ToolInput}
}

// post sends body to hostd and decodes a 200 answer into out. Anything else
// is an error naming what went wrong.
func (h Hook) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 50 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(h.HostdURL, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxInput))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s answered %s: %s", url, resp.Status, e.Error)
		}
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unreadable answer: %w", url, err)
	}
	return nil
}

func readInput(r io.Reader) (Input, error) {
	var in Input
	raw, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return in, err
	}
	if len(raw) > maxInput {
		return in, fmt.Errorf("more than %d bytes", maxInput)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("not JSON: %w", err)
	}
	if in.HookEventName == "" || in.ToolName == "" {
		return in, errors.New("hook_event_name and tool_name are required")
	}
	return in, nil
}

func deny(reason string) Output {
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: PreToolUse, PermissionDecision: DecisionDeny, PermissionDecisionReason: reason}}
}

func resultText(r exthost.ToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// responseText is the tool response as the after hooks' result text: a JSON
// string as itself, anything else as its JSON.
func responseText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
