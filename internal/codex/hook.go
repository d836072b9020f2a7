package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loadout-dev/loadout/internal/claudecode"
)

// maxInput bounds the hook input read from stdin, as for Claude Code.
const maxInput = 4 << 20

// Hook answers one Codex hook event. Codex's hook input for tool calls is
// Claude Code's (hook_event_name, tool_name, tool_input, tool_use_id,
// tool_response), and Codex reports its shell tools as Bash and MCP tools as
// mcp__<server>__<tool>, so the decision is the Claude Code hook's; only the
// answer differs, because Codex accepts fewer shapes.
type Hook struct {
	// Decide is the Claude Code hook's decision; its Policy and MCPServer
	// apply (AutoAllow stays off: Codex refuses "allow").
	Decide claudecode.Hook
}

// Output is the answer on stdout in a shape Codex 0.169 accepts for the event.
// Codex refuses a PreToolUse "allow" without updatedInput, "ask", a deny
// without a reason, and a reason without a decision, and it runs a call
// whose hook answered something it refuses: so an allowed call is answered
// with no decision at all, and a denial always carries its reason.
type Output struct {
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user (after hooks' diagnostics).
	SystemMessage string `json:"systemMessage,omitempty"`
}

// SpecificOutput is hookSpecificOutput of a PreToolUse denial.
type SpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// Answer reads one hook input and answers it; it never fails. A PreToolUse
// that cannot be answered is denied with the reason. Events other than
// PreToolUse and PostToolUse (Codex's SessionStart, PermissionRequest, Stop…)
// get the empty answer, which every Codex event accepts and which changes
// nothing.
func (h Hook) Answer(ctx context.Context, stdin io.Reader) Output {
	raw, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return deny(fmt.Sprintf("Loadout could not read the hook input (%v); the call is blocked", err))
	}
	var head struct {
		HookEventName string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(raw, &head)
	switch head.HookEventName {
	case claudecode.PreToolUse, "":
		// An unreadable input is answered as a PreToolUse, which fails closed.
		out := h.Decide.AnswerJSON(ctx, bytes.NewReader(raw))
		if s := out.HookSpecificOutput; s != nil && s.PermissionDecision == claudecode.DecisionDeny {
			return deny(s.PermissionDecisionReason)
		}
		if out.Decision == "block" {
			return deny(out.Reason)
		}
		return Output{}
	case claudecode.PostToolUse:
		return Output{SystemMessage: h.Decide.AnswerJSON(ctx, bytes.NewReader(raw)).SystemMessage}
	default:
		return Output{}
	}
}

func deny(reason string) Output {
	if reason == "" {
		reason = "blocked by the Workspace's Loadout policy"
	}
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: claudecode.PreToolUse,
		PermissionDecision: claudecode.DecisionDeny, PermissionDecisionReason: reason}}
}
