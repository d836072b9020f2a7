package hostd

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// lifecycleRegistry adds hooks at the new events to the runnable registry:
// a review_note rewrite, a UserInput guard and a SessionStart context.
func lifecycleRegistry(url string) contract.Registry {
	reg := runnableRegistry(url, 5)
	reg.Deny = nil
	reg.Hooks = append(reg.Hooks,
		contract.Hook{Extension: "review-extension", Name: "tag", Event: contract.EventBeforeToolCall, Tools: []string{"review_note"}, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "call.arguments.text.startsWith('[review] ') ? {} : {'arguments': {'text': '[review] ' + call.arguments.text}}"}},
		contract.Hook{Extension: "review-extension", Name: "no-numbers", Event: contract.EventBeforeToolCall, Tools: []string{"review_note"}, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "call.arguments.text.contains('42') ? {'arguments': {'text': 42}} : {}"}},
		contract.Hook{Extension: "review-extension", Name: "dry-run", Event: contract.EventBeforeToolCall, Tools: []string{"shell"}, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "call.arguments.command.startsWith('terraform apply') ? {'arguments': {'command': call.arguments.command + ' -dry-run'}} : {}"}},
		contract.Hook{Extension: "review-extension", Name: "no-secret-prompts", Event: contract.EventUserInput, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "{'allow': !prompt.text.contains('SECRET'), 'message': 'prompts must not carry secrets', 'context': 'tenant a'}"}},
		contract.Hook{Extension: "review-extension", Name: "tenant", Event: contract.EventSessionStart, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "{'context': 'you work for ' + workspace.namespace}"}},
	)
	return reg
}

func TestEvents_UserInputAndSessionStart(t *testing.T) {
	_, ts, _ := newTestServer(t, lifecycleRegistry("http://127.0.0.1:1"))
	var out EventResponse
	if code := post(t, ts.URL+"/v1/events/UserInput", map[string]any{"prompt": map[string]any{"text": "the SECRET is 42"}}, &out); code != 200 ||
		out.Allowed || out.Message != "prompts must not carry secrets" || out.Hook != "no-secret-prompts" || out.Context != "" {
		t.Fatalf("UserInput with a secret: %d %+v", code, out)
	}
	out = EventResponse{}
	if code := post(t, ts.URL+"/v1/events/UserInput", map[string]any{"prompt": map[string]any{"text": "hello"}}, &out); code != 200 || !out.Allowed || out.Context != tenantHookText("review-extension", "tenant a") {
		t.Fatalf("UserInput: %d %+v", code, out)
	}
	out = EventResponse{}
	if code := post(t, ts.URL+"/v1/events/SessionStart", map[string]any{"session": map[string]any{"id": "s"}}, &out); code != 200 || !out.Allowed || out.Context != tenantHookText("review-extension", "you work for team-a") {
		t.Fatalf("SessionStart: %d %+v", code, out)
	}
	var e ErrorResponse
	for path, body := range map[string]any{"BeforeToolCall": map[string]any{}, "Nope": map[string]any{}, "UserInput": map[string]any{}} {
		if code := post(t, ts.URL+"/v1/events/"+path, body, &e); code < 400 {
			t.Errorf("/v1/events/%s answered %d", path, code)
		}
	}
}

func TestBefore_AnswersTheRewrittenArguments(t *testing.T) {
	_, ts, _ := newTestServer(t, lifecycleRegistry("http://127.0.0.1:1"))
	apply := map[string]any{"id": "1", "name": "bash", "arguments": map[string]any{"command": "terraform apply"}}
	var out BeforeResponse
	post(t, ts.URL+"/v1/before", map[string]any{"call": apply, "acceptArguments": true}, &out)
	if !out.Allowed || out.Arguments["command"] != "terraform apply -dry-run" {
		t.Fatalf("before: %+v", out)
	}
	// A caller that cannot apply a rewrite gets the call blocked, never
	// allowed as the agent sent it.
	out = BeforeResponse{}
	post(t, ts.URL+"/v1/before", map[string]any{"call": apply}, &out)
	if out.Allowed || out.Result == nil || !strings.Contains(out.Result.Content[0].Text, "cannot run a rewritten call") {
		t.Fatalf("before without acceptArguments: %+v", out)
	}
	out = BeforeResponse{}
	post(t, ts.URL+"/v1/before", map[string]any{"call": map[string]any{"id": "1", "name": "bash", "arguments": map[string]any{"command": "ls"}}, "acceptArguments": true}, &out)
	if !out.Allowed || out.Arguments != nil {
		t.Fatalf("an unrewritten call came back with arguments: %+v", out)
	}
}

// /v1/tools runs the call as the hooks rewrote it, re-checked against the
// tool's schema: the Service sees the rewrite, and a rewrite the schema
// refuses never reaches it.
func TestTools_RunTheRewrittenCall_RHK9(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, lifecycleRegistry(svc.URL))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "looks good"}})
	if code != 200 || !resp.Executed || resp.Call.Arguments["text"] != "[review] looks good" {
		t.Fatalf("rewritten call: %d %+v", code, resp)
	}
	if inv := svc.last.Load(); inv == nil || inv.Call.Arguments["text"] != "[review] looks good" {
		t.Fatalf("service saw %+v", inv)
	}
	code, resp, _ = runTool(t, ts.URL, "review_note", map[string]any{"id": "t-2", "arguments": map[string]any{"text": "answer 42"}})
	if code != 200 || resp.Executed || !resp.Result.IsError || !strings.Contains(resp.Result.Content[0].Text, "input schema refuses") {
		t.Fatalf("schema-breaking rewrite: %d %+v", code, resp)
	}
	if svc.calls.Load() != 1 {
		t.Fatalf("service called %d times", svc.calls.Load())
	}
}

// MCP tools/call runs the call as the hooks rewrote it, like /v1/tools.
func TestMCP_ToolsCallRunsTheRewrittenCall_RHK9(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, lifecycleRegistry(svc.URL))
	session := connectMCP(t, ts.URL, nil)
	res, text := callMCP(t, session, "review_note", map[string]any{"text": "looks good"})
	if res.IsError || text != "note recorded" {
		t.Fatalf("MCP call: %+v %q", res, text)
	}
	if inv := svc.last.Load(); inv == nil || inv.Call.Arguments["text"] != "[review] looks good" {
		t.Fatalf("the Service saw %+v, not the rewritten call", inv)
	}
	res, text = callMCP(t, session, "review_note", map[string]any{"text": "answer 42"})
	if !res.IsError || !strings.Contains(text, "input schema refuses") || svc.calls.Load() != 1 {
		t.Fatalf("schema-breaking rewrite over MCP: %+v %q (service calls %d)", res, text, svc.calls.Load())
	}
}
