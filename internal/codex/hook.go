package codex

import (
	"context"
	"fmt"
	"io"

	"github.com/loadout-dev/loadout/internal/claudecode"
)

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

// Output is the answer on stdout: the same JSON fields as Claude Code's
// (claudecode.Output), filled only in shapes Codex 0.169 accepts for the
// event. Codex refuses a PreToolUse "allow" without updatedInput, "ask", a
// deny without a reason, and a reason without a decision, and it runs a call
// whose hook answered something it refuses: so an allowed call is answered
// with no decision at all, an ask is a denial, and a denial always carries
// its reason.
type Output = claudecode.Output

// SpecificOutput is hookSpecificOutput: a PreToolUse denial or rewrite, or
// a SessionStart's or UserPromptSubmit's context for the model.
type SpecificOutput = claudecode.SpecificOutput

// Answer reads one hook input and answers it; it never fails. A PreToolUse
// (or an input whose event cannot be read) that cannot be answered is
// denied with the reason. Events Codex has no accepted answer for here
// (PermissionRequest, PreCompact…) get the empty answer, which every Codex
// event accepts and which changes nothing.
func (h Hook) Answer(ctx context.Context, stdin io.Reader) Output {
	in, err := claudecode.ReadInput(stdin)
	if err != nil && in.HookEventName != claudecode.UserPromptSubmit {
		return deny(fmt.Sprintf("Loadout could not read the hook input (%v); the call is blocked", err))
	}
	if err != nil {
		return Output{Decision: "block", Reason: fmt.Sprintf("Loadout could not read the hook input (%v); the prompt is blocked", err)}
	}
	switch in.HookEventName {
	case claudecode.PreToolUse, claudecode.PostToolUse, claudecode.SessionStart, claudecode.UserPromptSubmit, claudecode.SessionEnd, claudecode.Stop,
		claudecode.PreCompact, claudecode.PreModelRequest:
	default:
		return Output{}
	}
	decide := h.Decide
	if decide.Agent == "" {
		decide.Agent = "codex"
	}
	d := decide.Decide(ctx, in)
	switch d.Event {
	case claudecode.PreToolUse:
		if d.Block || d.Ask {
			return deny(d.Reason)
		}
		if d.Arguments != nil {
			// Codex applies updatedInput only with "allow".
			return Output{HookSpecificOutput: &SpecificOutput{HookEventName: claudecode.PreToolUse,
				PermissionDecision: claudecode.DecisionAllow, UpdatedInput: d.Arguments}}
		}
		return Output{}
	case claudecode.UserPromptSubmit:
		if d.Block {
			return Output{Decision: "block", Reason: d.Reason}
		}
		return withContext(d)
	case claudecode.SessionStart:
		return withContext(d)
	case claudecode.PreCompact:
		// BeforeCompact. Codex 0.169 fails a PreCompact hook that answers
		// a decision and compacts all the same (test/agents/codex
		// TestCodex_PreCompactRunsTheBeforeCompactHooks_RLC4): a denial cannot
		// cancel the compaction, so the user is told, like a summary
		// Codex cannot take.
		return observeOnly(d, "cancel a compaction from a hook; it goes on")
	case claudecode.PreModelRequest:
		// BeforeModelRequest. Codex 0.169 sends the request whatever its
		// PreModelRequest hook answers (a decision, additionalContext, exit
		// 2): the hooks judge it, and a denial or a context is told.
		if !d.Block && d.Context != "" {
			return Output{SystemMessage: "Loadout: a BeforeModelRequest hook's context was not added (Codex cannot change a model request from a hook)"}
		}
		return observeOnly(d, "stop a model request from a hook; it is sent")
	case claudecode.Stop:
		// A blocked stop: Codex goes on, with the reason as its next
		// instruction.
		if d.Block {
			return Output{Decision: "block", Reason: d.Reason}
		}
		return Output{SystemMessage: d.SystemMessage}
	default:
		return Output{SystemMessage: d.SystemMessage}
	}
}

// observeOnly answers an event whose outcome Codex cannot honour: a denial
// is told to the user with what Codex cannot do.
func observeOnly(d claudecode.Decision, cannot string) Output {
	if d.Block {
		return Output{SystemMessage: "Loadout: " + d.Reason + " (Codex cannot " + cannot + ")"}
	}
	return Output{SystemMessage: d.SystemMessage}
}

func withContext(d claudecode.Decision) Output {
	if d.Context == "" {
		return Output{}
	}
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: d.Event, AdditionalContext: d.Context}}
}

func deny(reason string) Output {
	if reason == "" {
		reason = "blocked by the Workspace's Loadout policy"
	}
	return Output{HookSpecificOutput: &SpecificOutput{HookEventName: claudecode.PreToolUse,
		PermissionDecision: claudecode.DecisionDeny, PermissionDecisionReason: reason}}
}
