package claudecode

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// Decision is what the Workspace's hooks made of one hook input, before it
// is written in an agent's answer shape: Claude Code's (ClaudeCode) or
// Codex's (package codex). The zero Decision decides nothing.
type Decision struct {
	// Event is the agent's hook event the decision answers.
	Event string
	// Block stops what the event guards (the prompt, the call, the
	// compaction, the session) with Reason.
	Block  bool
	Reason string
	// Ask (PreToolUse) asks the user with Reason; a headless agent denies.
	Ask bool
	// Arguments (PreToolUse) are the rewritten tool input to run.
	Arguments map[string]any
	// Allow (PreToolUse) answers "allow": the hook's AutoAllow.
	Allow bool
	// Context is text added for the model (SessionStart, UserPromptSubmit).
	Context string
	// SystemMessage is shown to the user only.
	SystemMessage string
	// replaced: a hook rewrote the prompt, which neither agent can send.
	replaced bool
}

// Decide maps one agent hook event to Loadout's events (docs/agents.md) and
// asks the policy. Events that guard something (SessionStart,
// UserPromptSubmit, PreToolUse, PreCompact) are blocked when the policy
// cannot decide (rule R-AG-3); observers (PostToolUse, PostToolUseFailure,
// SessionEnd) never block; every other event decides nothing.
func (h Hook) Decide(ctx context.Context, in Input) Decision {
	d := Decision{Event: in.HookEventName}
	if h.Policy == nil && in.HookEventName != PostToolUse && in.HookEventName != PostToolUseFailure {
		return d.blocked("Loadout has no policy to ask")
	}
	session := h.session(in)
	// Tool hooks take the session and cwd from the context; the session
	// events from their request.
	ctx = exthost.WithRuntime(ctx, exthost.Runtime{Session: session, Cwd: in.Cwd})
	switch in.HookEventName {
	case PreToolUse:
		return h.before(ctx, in, d)
	case PostToolUse:
		d.SystemMessage = h.after(ctx, in, responseResult(in.ToolResponse))
	case PostToolUseFailure:
		d.SystemMessage = h.after(ctx, in, exthost.ToolResult{IsError: true, Content: []exthost.Content{{Type: "text", Text: in.Error}}})
	case SessionStart:
		session.Reason = in.Source
		return h.event(ctx, d, exthost.EventRequest{Event: vocab.SessionStart, Session: session, Cwd: in.Cwd})
	case UserPromptSubmit:
		return h.prompt(ctx, d, session, in)
	case PreCompact:
		session.Reason = in.Trigger
		return h.compact(ctx, d, exthost.EventRequest{Event: vocab.BeforeCompact, Session: session, Cwd: in.Cwd})
	case SessionEnd:
		session.Reason = in.Reason
		out, err := h.Policy.Event(ctx, exthost.EventRequest{Event: vocab.SessionEnd, Session: session, Cwd: in.Cwd})
		d.SystemMessage = observed(out, err)
	case PreModelRequest:
		// The request is the agent's to send: the hooks' denial is the
		// decision, which the agent's answer honours where it can.
		return h.event(ctx, d, exthost.EventRequest{Event: vocab.BeforeModelRequest, Session: session, Cwd: in.Cwd, Model: &exthost.ModelInfo{ID: in.Model}})
	case Stop, SubagentStop:
		return h.stop(ctx, d, in, session)
	}
	return d
}

// blocked is d blocking with a reason that says the policy could not decide.
func (d Decision) blocked(why string) Decision {
	d.Block, d.Reason = true, why+"; "+blockedWhat(d.Event)+" is blocked"
	return d
}

func blockedWhat(event string) string {
	switch event {
	case UserPromptSubmit:
		return "the prompt"
	case SessionStart:
		return "the session"
	case PreCompact:
		return "the compaction"
	default:
		return "the call"
	}
}

// event runs a blocking session event: a denial, an ask (nobody to ask
// inside a hook) or a failure blocks; the context is kept.
func (h Hook) event(ctx context.Context, d Decision, req exthost.EventRequest) Decision {
	out, err := h.Policy.Event(ctx, req)
	return eventDecision(d, req, out, err)
}

// eventDecision is a blocking session event's outcome as d.
func eventDecision(d Decision, req exthost.EventRequest, out exthost.EventOutcome, err error) Decision {
	if err != nil {
		return d.blocked(fmt.Sprintf("Loadout could not run the %s hooks (%v)", req.Event, err))
	}
	if !out.Allowed {
		d.Block, d.Reason = true, denialMessage(out.Message, req.Event)
		return d
	}
	d.Context = JoinContext(out.Context, modelMessages(out.Messages))
	d.SystemMessage = userMessages(out.Messages)
	d.replaced = req.Prompt != nil && out.Input != nil && *out.Input != req.Prompt.Text
	return d
}

// prompt runs UserInput and then BeforeAgentStart on a submitted prompt.
// Neither agent can replace a prompt from its hook, so an input rewrite
// blocks the prompt: the unrewritten text never reaches the model. Neither
// can refuse a session from SessionStart either, so the SessionStart hooks
// are asked again first and their denial blocks the prompt (their context
// was added at SessionStart).
func (h Hook) prompt(ctx context.Context, d Decision, session exthost.SessionInfo, in Input) Decision {
	if start := h.event(ctx, d, exthost.EventRequest{Event: vocab.SessionStart, Session: session, Cwd: in.Cwd}); start.Block {
		return start
	}
	text := in.Prompt
	p := exthost.Prompt{Text: text, Source: "hook"}
	out, err := h.Policy.Event(ctx, exthost.EventRequest{Event: vocab.UserInput, Session: session, Prompt: &p, Cwd: in.Cwd})
	switch {
	case err != nil:
		return d.blocked(fmt.Sprintf("Loadout could not run the %s hooks (%v)", vocab.UserInput, err))
	case !out.Allowed:
		d.Block, d.Reason = true, denialMessage(out.Message, vocab.UserInput)
		return d
	case out.Input != nil && *out.Input != text:
		d.Block, d.Reason = true, "a Loadout UserInput hook rewrote the prompt and this agent cannot replace a prompt, so it is blocked; send it again without what the hook removes"
		return d
	}
	next := h.event(ctx, d, exthost.EventRequest{Event: vocab.BeforeAgentStart, Session: session, Prompt: &p, Cwd: in.Cwd})
	if next.Block {
		return next
	}
	if next.replaced {
		next.Block, next.Reason = true, "a Loadout BeforeAgentStart hook rewrote the prompt and this agent cannot replace a prompt, so it is blocked; send it again without what the hook removes"
		next.Context = ""
		return next
	}
	next.Context = JoinContext(JoinContext(out.Context, modelMessages(out.Messages)), next.Context)
	next.SystemMessage = JoinContext(userMessages(out.Messages), next.SystemMessage)
	return next
}

// JoinContext joins two context texts with a blank line, leaving out an
// empty one.
func JoinContext(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

func denialMessage(message string, event vocab.HookEvent) string {
	if message == "" {
		return fmt.Sprintf("%s denied by the Workspace's Loadout policy", event)
	}
	return message
}

// observed is the user-facing note of an observing event's outcome.
func observed(out exthost.EventOutcome, err error) string {
	if err != nil {
		return fmt.Sprintf("Loadout: the hooks did not run (%v)", err)
	}
	return diagnosticsMessage(out.Diagnostics)
}

func diagnosticsMessage(diags []exthost.Diagnostic) string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, fmt.Sprintf("%s/%s %s: %s", d.ExtensionID, d.Hook, d.Kind, d.Message))
	}
	if len(lines) == 0 {
		return ""
	}
	return "Loadout hooks: " + strings.Join(lines, "; ")
}

func (h Hook) before(ctx context.Context, in Input, d Decision) Decision {
	if in.ToolName == "" {
		d.Block, d.Reason = true, "Loadout got a PreToolUse without tool_name; the call is blocked"
		return d
	}
	v, err := h.Policy.Before(ctx, h.call(in))
	if err != nil {
		return d.blocked(fmt.Sprintf("Loadout could not get a policy decision from hostd (%v)", err))
	}
	if v.Blocked != nil {
		d.Reason = ResultText(*v.Blocked)
		if d.Reason == "" {
			d.Reason = "blocked by the Workspace's Loadout policy"
		}
		d.Block, d.Ask = !v.Ask, v.Ask
		if v.Ask {
			d.Arguments = v.Arguments
		}
		return d
	}
	d.Arguments, d.Allow = v.Arguments, h.AutoAllow
	return d
}

// after reports the tool's result to the after hooks. They only observe:
// diagnostics reach the user as a system message, never the model, and a
// failure to reach hostd blocks nothing (the tool already ran). Loadout's own
// MCP tools are skipped: hostd ran their after hooks on the real result.
func (h Hook) after(ctx context.Context, in Input, result exthost.ToolResult) string {
	if in.ToolName == "" || h.ownMCPTool(in.ToolName) || h.Policy == nil {
		return ""
	}
	call := h.call(in)
	result.ToolCallID, result.ToolName = call.ID, call.Name
	diags, err := h.Policy.After(ctx, call, result)
	if err != nil {
		return fmt.Sprintf("Loadout: the after hooks did not run (%v)", err)
	}
	if m := diagnosticsMessage(diags); m != "" {
		return "Loadout after hooks: " + strings.TrimPrefix(m, "Loadout hooks: ")
	}
	return ""
}

// ClaudeCode writes d in Claude Code's answer shape for its event.
func (d Decision) ClaudeCode() Output {
	out := Output{SystemMessage: d.SystemMessage}
	switch d.Event {
	case PreToolUse:
		s := &SpecificOutput{HookEventName: PreToolUse, UpdatedInput: d.Arguments}
		switch {
		case d.Block:
			return deny(d.Reason)
		case d.Ask:
			s.PermissionDecision, s.PermissionDecisionReason = DecisionAsk, d.Reason
		case d.Allow:
			s.PermissionDecision, s.PermissionDecisionReason = DecisionAllow, "allowed by the Workspace's Loadout policy"
		}
		out.HookSpecificOutput = s
	case SessionStart:
		// Claude Code cannot refuse a session here (continue: false does
		// not stop claude -p): the user sees the reason, and every prompt
		// is blocked at UserPromptSubmit.
		if d.Block {
			out.SystemMessage = d.Reason
		} else if d.Context != "" {
			out.HookSpecificOutput = &SpecificOutput{HookEventName: SessionStart, AdditionalContext: d.Context}
		}
	case UserPromptSubmit:
		if d.Block {
			out.Decision, out.Reason = "block", d.Reason
		} else if d.Context != "" {
			out.HookSpecificOutput = &SpecificOutput{HookEventName: UserPromptSubmit, AdditionalContext: d.Context}
		}
	default:
		if d.Block {
			out.Decision, out.Reason = "block", d.Reason
		}
	}
	return out
}
