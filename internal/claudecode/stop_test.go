package claudecode

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// hostPolicy asks a real hook host, as hostd does.
type hostPolicy struct{ h *exthost.Host }

func (p hostPolicy) Before(ctx context.Context, call exthost.ToolCall) (BeforeVerdict, error) {
	d := p.h.Decide(ctx, call)
	return BeforeVerdict{Blocked: d.Blocked, Ask: d.Asks()}, nil
}

func (p hostPolicy) After(ctx context.Context, call exthost.ToolCall, r exthost.ToolResult) ([]exthost.Diagnostic, error) {
	return p.h.After(ctx, call, r), nil
}

func (p hostPolicy) Event(ctx context.Context, req exthost.EventRequest) (exthost.EventOutcome, error) {
	return p.h.Event(ctx, req)
}

func celHost(t *testing.T, hooks map[string]vocab.HookEvent, types ...exthost.MessageTypeDecl) *exthost.Host {
	t.Helper()
	h := exthost.NewHost(exthost.Options{Workspace: exthost.WorkspaceInfo{Name: "ws", Namespace: "team-a"}})
	out := h.Load(context.Background(), exthost.Source{ID: "ext", Import: func(context.Context, exthost.Env) (exthost.Factory, error) {
		return func(api exthost.API) error {
			for _, m := range types {
				api.DeclareMessageType(m)
			}
			i := 0
			for expr, event := range hooks {
				handler, err := exthost.CompileCEL(event, expr, "")
				if err != nil {
					return err
				}
				api.On(exthost.Hook{Name: "h" + string(rune('a'+i)), Event: event, Handler: handler})
				i++
			}
			return nil
		}, nil
	}}, true)
	if out.State != vocab.ExtensionLoaded {
		t.Fatalf("load: %+v", out)
	}
	return h
}

// Stop and SubagentStop run Loadout's Stop hooks with stop_hook_active and
// the last message; a denial is Claude Code's block (go on, told why), and
// a failing hook blocks nothing.
func TestStop_DenialBlocksTheStopFailureDoesNot_RLC5(t *testing.T) {
	h := Hook{Policy: hostPolicy{celHost(t, map[string]vocab.HookEvent{
		"stop.active || stop.lastMessage.contains('DONE') ? {} : {'allow': false, 'message': 'run the tests, then say DONE'}": vocab.Stop,
	})}}
	got := answer(t, h, `{"hook_event_name":"Stop","session_id":"s","stop_hook_active":false,"last_assistant_message":"I edited it."}`)
	if got != `{"decision":"block","reason":"run the tests, then say DONE"}` {
		t.Fatalf("stop answered %s", got)
	}
	for _, in := range []string{
		`{"hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"I edited it."}`,
		`{"hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"explorer","last_assistant_message":"DONE"}`,
	} {
		if got := answer(t, h, in); got != `{}` {
			t.Fatalf("%s answered %s", in, got)
		}
	}
	broken := Hook{Policy: hostPolicy{celHost(t, map[string]vocab.HookEvent{"int(stop.lastMessage) == 1": vocab.Stop})}}
	if got := answer(t, broken, `{"hook_event_name":"Stop"}`); strings.Contains(got, "block") || !strings.Contains(got, "systemMessage") {
		t.Fatalf("a failing Stop hook answered %s", got)
	}
}

// Every hook sees the session with Claude Code's agent and subagent, and
// the cwd: a subagent's tool call is judged by who makes it.
func TestSessionAndCwdReachEveryHook_RLC6(t *testing.T) {
	h := Hook{Policy: hostPolicy{celHost(t, map[string]vocab.HookEvent{
		"session.agentType == 'explorer' && call.name == 'Bash' ? {'allow': false, 'message': session.agent + '/' + session.agentId + ' in ' + cwd} : {}": vocab.BeforeToolCall,
		"{'context': 'session ' + session.id + ' of ' + session.agent + ' in ' + cwd}":                                                                    vocab.SessionStart,
	})}}
	got := answer(t, h, `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","agent_id":"a1","agent_type":"explorer","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`)
	if !strings.Contains(got, `"permissionDecision":"deny","permissionDecisionReason":"claude-code/a1 in /w"`) {
		t.Fatalf("subagent call answered %s", got)
	}
	if got := answer(t, h, `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`); strings.Contains(got, "deny") {
		t.Fatalf("main agent's call answered %s", got)
	}
	codex := Hook{Policy: h.Policy, Agent: "codex"}
	if got := answer(t, codex, `{"hook_event_name":"SessionStart","session_id":"s2","cwd":"/x","source":"startup"}`); !strings.Contains(got, `\u003e session s2 of codex in /x"`) {
		t.Fatalf("session start answered %s", got)
	}
}

// A summary is Pi's alone: here the compaction goes on and the user is told
// the agent summarises itself. A prompt rewrite at BeforeAgentStart cannot
// be sent, so the prompt is blocked. Typed messages reach the model through
// their template when their type is in context, and the user otherwise.
func TestSummaryRewriteAndTypedMessages_RLC5_RLC8(t *testing.T) {
	h := Hook{Policy: hostPolicy{celHost(t, map[string]vocab.HookEvent{
		"{'summary': 'kept'}": vocab.BeforeCompact,
		"prompt.text.contains('brief') ? {} : {'input': prompt.text + ' (be brief)'}": vocab.BeforeAgentStart,
		"{'customMessage': {'type': 'ci/status', 'content': 'green'}}":                vocab.SessionStart,
		"{'customMessage': {'type': 'ui/note', 'content': 'for you only'}}":           vocab.UserInput,
	}, exthost.MessageTypeDecl{Type: "ci/status", InContext: true, Template: "CI says: {{content}}"}, exthost.MessageTypeDecl{Type: "ui/note"})}}
	if got := answer(t, h, `{"hook_event_name":"PreCompact","trigger":"manual"}`); !strings.Contains(got, "cannot take one from a hook") || strings.Contains(got, "block") {
		t.Fatalf("compact answered %s", got)
	}
	if got := answer(t, h, `{"hook_event_name":"UserPromptSubmit","prompt":"fix it"}`); !strings.Contains(got, `"decision":"block"`) || !strings.Contains(got, "BeforeAgentStart hook rewrote the prompt") {
		t.Fatalf("rewritten prompt answered %s", got)
	}
	if got := answer(t, h, `{"hook_event_name":"SessionStart","source":"startup"}`); !strings.Contains(got, `"additionalContext":"CI says: green"`) {
		t.Fatalf("session start answered %s", got)
	}
	got := answer(t, h, `{"hook_event_name":"UserPromptSubmit","prompt":"fix it, brief"}`)
	if got != `{"systemMessage":"[ui/note] for you only"}` {
		t.Fatalf("a typed message the model must not see answered %s", got)
	}
}
