package claudecode

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// session is the hook input's session as every hook sees it: the agent and,
// inside a subagent, the subagent's id and type.
func (h Hook) session(in Input) exthost.SessionInfo {
	agent := h.Agent
	if agent == "" {
		agent = "claude-code"
	}
	return exthost.SessionInfo{ID: in.SessionID, Agent: agent, AgentID: in.AgentID, AgentType: in.AgentType}
}

// stop runs the Stop hooks when the agent (or a subagent) is about to end
// its turn. A denial blocks the stop: both agents then go on, with the
// reason as their next instruction. A failure blocks nothing (a broken hook
// must not keep an agent running): the user is told.
func (h Hook) stop(ctx context.Context, d Decision, in Input, session exthost.SessionInfo) Decision {
	out, err := h.Policy.Event(ctx, exthost.EventRequest{Event: vocab.Stop, Session: session, Cwd: in.Cwd,
		Stop: &exthost.StopInfo{Active: in.StopHookActive, LastMessage: in.LastAssistantMessage}})
	switch {
	case err != nil:
		d.SystemMessage = fmt.Sprintf("Loadout: the Stop hooks did not run (%v)", err)
	case !out.Allowed:
		d.Block, d.Reason = true, denialMessage(out.Message, vocab.Stop)
	default:
		d.SystemMessage = diagnosticsMessage(out.Diagnostics)
	}
	return d
}

// compact runs the BeforeCompact hooks. Neither agent takes a summary from
// a hook: one that supplies it is told so, and the agent summarises itself.
func (h Hook) compact(ctx context.Context, d Decision, req exthost.EventRequest) Decision {
	out, err := h.Policy.Event(ctx, req)
	d = eventDecision(d, req, out, err)
	if !d.Block && out.Summary != nil {
		d.SystemMessage = "Loadout: a BeforeCompact hook supplied a summary; this agent cannot take one from a hook, so it summarises the history itself"
	}
	return d
}

// modelMessages is the text of the hooks' typed messages whose type enters
// the model's context, each as its type's template renders it: neither agent
// has typed messages, so they reach the model as context.
func modelMessages(ms []exthost.CustomMessage) string {
	var parts []string
	for _, m := range ms {
		if m.InContext {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// userMessages is the typed messages the model must not see, for the user.
func userMessages(ms []exthost.CustomMessage) string {
	var parts []string
	for _, m := range ms {
		if !m.InContext {
			parts = append(parts, fmt.Sprintf("[%s] %s", m.Type, m.Content))
		}
	}
	return strings.Join(parts, "\n")
}
