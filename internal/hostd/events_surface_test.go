package hostd

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// surfaceRegistry has hooks at the turn, model and stop events, a
// parameterised guard, a summary and a typed message.
func surfaceRegistry(maxCommand string) contract.Registry {
	reg := fixedRegistry()
	reg.Deny = nil
	reg.MessageTypes = append(reg.MessageTypes, contract.MessageType{Extension: "review-extension", Type: "ci/status", InContext: true, Template: "CI: {{content}}"})
	params := &contract.HookParams{From: "team-a/guard", Values: map[string]string{"maxCommand": maxCommand}}
	reg.Hooks = append(reg.Hooks,
		contract.Hook{Extension: "review-extension", Name: "explorers", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "session.agentType == 'explorer' ? {'allow': false, 'message': session.agent + ' ' + session.agentId + ' in ' + cwd} : {}"}},
		contract.Hook{Extension: "review-extension", Name: "length", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10, Params: params,
			CEL: &contract.CELHook{Expression: "!has(call.arguments.command) || call.arguments.command.size() <= int(params.maxCommand)", Message: "command too long"}},
		contract.Hook{Extension: "review-extension", Name: "done", Event: "Stop", TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "stop.active || stop.lastMessage.contains('DONE') ? {} : {'allow': false, 'message': 'say DONE'}"}},
		contract.Hook{Extension: "review-extension", Name: "summary", Event: "BeforeCompact", TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "{'summary': 'kept for ' + session.id}"}},
		contract.Hook{Extension: "review-extension", Name: "status", Event: contract.EventSessionStart, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "{'customMessage': {'type': 'ci/status', 'content': 'green'}}"}},
		contract.Hook{Extension: "review-extension", Name: "turns", Event: "TurnEnd", TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "turn.index < 3", Message: "too many turns"}},
	)
	return reg
}

// /v1/before and /v1/after take the session and cwd: hooks judge a call by
// the agent or subagent making it.
func TestBefore_SessionAndCwdReachTheHooks_RLC6(t *testing.T) {
	_, ts, _ := newTestServer(t, surfaceRegistry("100"))
	call := map[string]any{"id": "1", "name": "bash", "arguments": map[string]any{"command": "ls"}}
	var out BeforeResponse
	post(t, ts.URL+"/v1/before", map[string]any{"call": call, "cwd": "/w",
		"session": map[string]any{"id": "s", "agent": "pi", "agentId": "a1", "agentType": "explorer"}}, &out)
	if out.Allowed || out.Result == nil || out.Result.Content[0].Text != "pi a1 in /w" {
		t.Fatalf("subagent's call: %+v", out)
	}
	out = BeforeResponse{}
	post(t, ts.URL+"/v1/before", map[string]any{"call": call, "session": map[string]any{"id": "s", "agent": "pi"}}, &out)
	if !out.Allowed {
		t.Fatalf("main agent's call: %+v", out)
	}
}

// One published expression, two contexts' params: two verdicts.
func TestBefore_ParamsGiveEachContextItsVerdict_RLC7(t *testing.T) {
	call := map[string]any{"id": "1", "name": "bash", "arguments": map[string]any{"command": "make test"}}
	for maxCommand, allowed := range map[string]bool{"4": false, "100": true} {
		_, ts, _ := newTestServer(t, surfaceRegistry(maxCommand))
		var out BeforeResponse
		post(t, ts.URL+"/v1/before", map[string]any{"call": call}, &out)
		if out.Allowed != allowed {
			t.Fatalf("maxCommand %s: %+v", maxCommand, out)
		}
	}
}

func TestEvents_StopSummaryTurnAndTypedMessages_RLC5_RLC8(t *testing.T) {
	_, ts, _ := newTestServer(t, surfaceRegistry("100"))
	var out EventResponse
	if post(t, ts.URL+"/v1/events/Stop", map[string]any{"stop": map[string]any{"lastMessage": "edited"}}, &out); out.Allowed || out.Message != "say DONE" {
		t.Fatalf("Stop: %+v", out)
	}
	out = EventResponse{}
	if post(t, ts.URL+"/v1/events/Stop", map[string]any{"stop": map[string]any{"active": true}}, &out); !out.Allowed {
		t.Fatalf("active Stop: %+v", out)
	}
	out = EventResponse{}
	if post(t, ts.URL+"/v1/events/BeforeCompact", map[string]any{"session": map[string]any{"id": "s9"}}, &out); out.Summary == nil || *out.Summary != "kept for s9" {
		t.Fatalf("BeforeCompact: %+v", out)
	}
	out = EventResponse{}
	if post(t, ts.URL+"/v1/events/SessionStart", map[string]any{}, &out); len(out.Messages) != 1 || out.Messages[0].Text != "CI: green" || !out.Messages[0].InContext {
		t.Fatalf("SessionStart: %+v", out)
	}
	out = EventResponse{}
	if post(t, ts.URL+"/v1/events/TurnEnd", map[string]any{"turn": map[string]any{"index": 5}}, &out); !out.Allowed ||
		len(out.Diagnostics) != 1 || !strings.Contains(out.Diagnostics[0].Message, "too many turns") {
		t.Fatalf("TurnEnd (observing): %+v", out)
	}
}

// A runnable tool's hooks see the session and cwd the request carries, as
// /v1/before's do.
func TestTools_HooksSeeSessionAndCwd_RLC6(t *testing.T) {
	svc := newToolService(t, recordNote)
	reg := runnableRegistry(svc.URL, 5)
	reg.Hooks = append(reg.Hooks, contract.Hook{Extension: "review-extension", Name: "where", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10,
		CEL: &contract.CELHook{Expression: "session.agentType == 'explorer' ? {'allow': false, 'message': session.agent + ' in ' + cwd} : {}"}})
	_, ts, _ := newTestServer(t, reg)
	call := map[string]any{"id": "s-1", "arguments": map[string]any{"text": "fine"}}
	var resp ToolRunResponse
	post(t, ts.URL+"/v1/tools/review_note", map[string]any{"call": call, "cwd": "/w", "session": map[string]any{"agent": "pi", "agentType": "explorer"}}, &resp)
	if resp.Executed || resp.Result.Content[0].Text != "pi in /w" {
		t.Fatalf("subagent's call: %+v", resp)
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("the blocked call reached the service (%d calls)", n)
	}
	resp = ToolRunResponse{}
	post(t, ts.URL+"/v1/tools/review_note", map[string]any{"call": call, "session": map[string]any{"agent": "pi"}}, &resp)
	if !resp.Executed {
		t.Fatalf("main agent's call: %+v", resp)
	}
}
