package exthost

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// compileCase is an expression of an event's hook and the compile error it
// gives (empty: it compiles).
type compileCase struct {
	event   vocab.HookEvent
	expr    string
	wantErr string
}

func checkCompileCases(t *testing.T, cases []compileCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(string(tt.event)+" "+tt.expr, func(t *testing.T) {
			_, err := CompileCEL(tt.event, tt.expr, "")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("compile: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("compile error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The turn, model and stop events compile against their own payloads and
// outcomes: a Stop hook reads stop.active, a TurnEnd hook turn.text, and
// none may return what its event cannot act on.
func TestCompileCEL_TurnModelStopEvents_RLC5(t *testing.T) {
	checkCompileCases(t, []compileCase{
		{vocab.TurnStart, "turn.index < 50", ""},
		{vocab.TurnEnd, "!turn.text.contains('TODO')", ""},
		{vocab.BeforeModelRequest, "{'context': 'model ' + model.id}", ""},
		{vocab.AfterModelResponse, "response.stopReason != 'length'", ""},
		{vocab.Stop, "stop.active || stop.lastMessage.contains('DONE') ? {} : {'allow': false, 'message': 'say DONE'}", ""},
		{vocab.BeforeCompact, "{'summary': 'kept: ' + session.id}", ""},
		{vocab.BeforeAgentStart, "{'input': prompt.text + ' (be brief)'}", ""},
		{vocab.SessionStart, "{'customMessage': {'type': 'ci/status', 'content': 'green'}}", ""},
		{vocab.BeforeToolCall, "session.agentType != 'explorer' || call.name == 'read'", ""},
		{vocab.SessionEnd, "cwd.startsWith('/workspace')", ""},
		{vocab.Stop, "{'context': 'x'}", `outcome key "context" is not allowed for Stop`},
		{vocab.TurnStart, "{'customMessage': {'type': 't', 'content': 'c'}}", `outcome key "customMessage" is not allowed for TurnStart`},
		{vocab.BeforeCompact, "{'summary': 1}", `outcome key "summary" must be a string`},
		{vocab.SessionStart, "{'summary': 'x'}", `outcome key "summary" is not allowed for SessionStart`},
		{vocab.BeforeModelRequest, "request.messages < 200 && request.bytes < 1000000 && !('shell' in request.tools) && request.trigger == 'user'", ""},
		{vocab.BeforeModelRequest, "request.bytes > 2000000 || (request.trigger == 'toolResult' && 'bash' in request.tools) ? {'allow': false, 'message': 'too much'} : {}", ""},
		{vocab.BeforeModelRequest, "size(request.messages) > 0", "no matching overload"},
		{vocab.AfterModelResponse, "request.messages > 0", "undeclared reference to 'request'"},
		{vocab.TurnStart, "model.id == 'x'", "undeclared reference to 'model'"},
		{vocab.Stop, "turn.index == 1", "undeclared reference to 'turn'"},
	})
}

// A Stop hook's denial is the agent's answer (keep working, told why) even
// though Stop does not block: its failure is only a diagnostic, so a broken
// hook never keeps an agent running.
func TestEvent_StopDenialContinuesFailureStops_RLC5(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("stop", nil, hookFactory(
		celHook(t, "done", vocab.Stop, "stop.active || stop.lastMessage.contains('DONE') ? {} : {'allow': false, 'message': 'finish and say DONE'}"))))
	ctx := context.Background()
	out, err := h.Event(ctx, EventRequest{Event: vocab.Stop, Stop: &StopInfo{LastMessage: "halfway"}})
	if err != nil || out.Allowed || out.Message != "finish and say DONE" || out.Hook != "done" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.Stop, Stop: &StopInfo{Active: true, LastMessage: "halfway"}})
	if !out.Allowed {
		t.Fatalf("an active stop was denied again: %+v", out)
	}

	broken := newTestHost()
	mustLoad(t, broken, factorySource("stop", nil, hookFactory(celHook(t, "broken", vocab.Stop, "int(stop.lastMessage) == 1"))))
	out, _ = broken.Event(ctx, EventRequest{Event: vocab.Stop, Stop: &StopInfo{}})
	if !out.Allowed || len(out.Diagnostics) != 1 || out.Diagnostics[0].Kind != DiagnosticError {
		t.Fatalf("a failing Stop hook: %+v", out)
	}
}

// An agent that sends no payload gives the hooks an empty one, never a
// missing variable: a BeforeModelRequest hook is not failed (and the request
// blocked) because an agent sent no model.
func TestEvent_MissingPayloadIsEmpty_RLC5(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("ext", nil, hookFactory(
		celHook(t, "model", vocab.BeforeModelRequest, "model.id == '' ? {'context': 'no model named'} : {}"),
		celHook(t, "request", vocab.BeforeModelRequest, "request.messages == 0 && request.bytes == 0 && size(request.tools) == 0 && request.trigger == ''"),
		celHook(t, "stop", vocab.Stop, "!stop.active && stop.lastMessage == ''"),
		celHook(t, "turn", vocab.TurnEnd, "turn.index == 0 && turn.text == ''"),
		celHook(t, "response", vocab.AfterModelResponse, "response.text == '' && model.provider == ''"),
	)))
	for _, e := range []vocab.HookEvent{vocab.BeforeModelRequest, vocab.Stop, vocab.TurnEnd, vocab.AfterModelResponse} {
		out, err := h.Event(context.Background(), EventRequest{Event: e})
		if err != nil || !out.Allowed || len(out.Diagnostics) > 0 {
			t.Fatalf("%s without a payload: %+v, %v", e, out, err)
		}
		if e == vocab.BeforeModelRequest && hookTexts(out) != "no model named" {
			t.Fatalf("%s: %+v", e, out)
		}
	}
}

// BeforeModelRequest's hooks judge what the agent exposes of the request:
// how many messages and how large, the tools it offers and what it answers.
// A platform hook stops a request that offers a shell after a tool result
// and names the size it saw; the same request answering a prompt passes.
func TestEvent_BeforeModelRequestSeesTheRequest_RLC5(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("ext", nil, hookFactory(celHook(t, "request", vocab.BeforeModelRequest,
		"request.trigger == 'toolResult' && 'bash' in request.tools ? "+
			"{'allow': false, 'message': 'no shell after a tool result: ' + string(request.messages) + ' messages, ' + string(request.bytes) + ' bytes'} : {}"))))
	ctx := context.Background()
	req := &ModelRequest{Messages: 3, Bytes: 4096, Tools: []string{"read", "bash"}, Trigger: "toolResult"}
	out, err := h.Event(ctx, EventRequest{Event: vocab.BeforeModelRequest, Request: req})
	if err != nil || out.Allowed || out.Message != "no shell after a tool result: 3 messages, 4096 bytes" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	req.Trigger = "user"
	if out, err := h.Event(ctx, EventRequest{Event: vocab.BeforeModelRequest, Request: req}); err != nil || !out.Allowed {
		t.Fatalf("a request answering a prompt: %+v, %v", out, err)
	}
}

// BeforeCompact's summary is the last hook's (the platform's, which runs
// last); BeforeAgentStart may replace the prompt as UserInput does.
func TestEvent_SummaryAndBeforeAgentStartInput_RLC5(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("tenant", nil, hookFactory(
		celHook(t, "tenant-summary", vocab.BeforeCompact, "{'summary': 'tenant'}"),
		celHook(t, "brief", vocab.BeforeAgentStart, "{'input': prompt.text + ' (be brief)'}"))))
	mustLoad(t, h, Source{ID: "platform", Imposed: true, Import: func(context.Context, Env) (Factory, error) {
		return hookFactory(celHook(t, "platform-summary", vocab.BeforeCompact, "{'summary': 'platform: ' + session.id}")), nil
	}})
	ctx := context.Background()
	out, err := h.Event(ctx, EventRequest{Event: vocab.BeforeCompact, Session: SessionInfo{ID: "s1"}})
	if err != nil || !out.Allowed || out.Summary == nil || *out.Summary != "platform: s1" {
		t.Fatalf("compact outcome %+v, %v", out, err)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.BeforeAgentStart, Prompt: &Prompt{Text: "fix it"}})
	if out.Input == nil || *out.Input != "fix it (be brief)" {
		t.Fatalf("agent start outcome %+v", out)
	}
}

// Every hook, tool hooks included, sees the session with the agent or
// subagent that acts and the working directory: through CEL and in a
// webhook's review.
func TestHooks_SeeSessionAgentAndCwd_RLC6(t *testing.T) {
	var review HookReview
	srv := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &review)
		_, _ = w.Write([]byte(`{"allowed":true}`))
	})
	h := newTestHost("bash")
	mustLoad(t, h, factorySource("ext", nil, hookFactory(
		celHook(t, "explorers-read-only", vocab.BeforeToolCall,
			"session.agentType == 'explorer' && call.name == 'bash' ? {'allow': false, 'message': session.agent + ' subagent ' + session.agentId + ' in ' + cwd + ' may not run bash'} : {}"),
		Hook{Name: "audit", Event: vocab.BeforeToolCall, Handler: NewWebhook(outbound.Target{URL: srv.URL}, "ext", "audit", nil)},
	)))
	rt := Runtime{Session: SessionInfo{ID: "s1", Agent: "claude-code", AgentID: "a7", AgentType: "explorer"}, Cwd: "/workspace/app"}
	ctx := WithRuntime(context.Background(), rt)
	d := h.Decide(ctx, ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"command": "ls"}})
	if d.Blocked == nil || !strings.Contains(d.Blocked.Content[0].Text, "claude-code subagent a7 in /workspace/app may not run bash") {
		t.Fatalf("decision %+v", d)
	}
	rt.Session.AgentType = ""
	d = h.Decide(WithRuntime(context.Background(), rt), ToolCall{ID: "2", Name: "bash", Arguments: map[string]any{"command": "ls"}})
	if d.Blocked != nil {
		t.Fatalf("the main agent was blocked: %+v", d.Blocked)
	}
	if review.Session == nil || review.Session.ID != "s1" || review.Session.AgentID != "a7" || review.Cwd != "/workspace/app" || review.Call == nil {
		t.Fatalf("webhook review %+v", review)
	}
}

// One expression, two Workspaces' params: two verdicts. A hook reading a
// key its ConfigMap lacks, or reading params without a paramRef, is refused
// when it compiles; a missing ConfigMap fails the hook (Deny) or skips it
// (Allow).
func TestParams_OneExpressionTwoVerdicts_RLC7(t *testing.T) {
	const expr = "call.arguments.command.size() <= int(params.maxCommand)"
	load := func(params *contract.HookParams) (*Host, Outcome) {
		t.Helper()
		h := newTestHost("bash")
		src := WithParams(factorySource("guard", nil, hookFactory(celHook(t, "length", vocab.BeforeToolCall, expr))), params)
		return h, h.Load(context.Background(), src, true)
	}
	verdict := func(params *contract.HookParams) *ToolResult {
		t.Helper()
		h, out := load(params)
		if out.State != vocab.ExtensionLoaded {
			t.Fatalf("load: %+v", out)
		}
		return h.Decide(context.Background(), ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"command": "make test"}}).Blocked
	}
	if b := verdict(&contract.HookParams{From: "team-a/guard", Values: map[string]string{"maxCommand": "4"}}); b == nil || b.Content[0].Text != "denied by length" {
		t.Fatalf("team-a (max 4): %+v", b)
	}
	if b := verdict(&contract.HookParams{From: "team-b/guard", Values: map[string]string{"maxCommand": "100"}}); b != nil {
		t.Fatalf("team-b (max 100) blocked: %+v", b)
	}
	b := verdict(&contract.HookParams{From: "team-c/guard", Missing: string(vocab.ParamsDeny)})
	if b == nil || !strings.Contains(b.Details["error"].(string), "params ConfigMap team-c/guard was not found (parameterNotFoundAction: Deny)") {
		t.Fatalf("missing, Deny: %+v", b)
	}
	if b := verdict(&contract.HookParams{From: "team-c/guard", Missing: string(vocab.ParamsAllow)}); b != nil {
		t.Fatalf("missing, Allow: %+v", b)
	}

	_, out := load(&contract.HookParams{From: "team-a/guard", Values: map[string]string{"maxcommand": "4"}})
	if out.State == vocab.ExtensionLoaded || !strings.Contains(out.Message, `spec.hooks[0].cel.expression`) ||
		!strings.Contains(out.Message, `reads params.maxCommand, but ConfigMap team-a/guard has no key "maxCommand" (it has: maxcommand)`) {
		t.Fatalf("missing key: %+v", out)
	}
	_, out = load(nil)
	if out.State == vocab.ExtensionLoaded || !strings.Contains(out.Message, "reads params, but the extension has no paramRef") {
		t.Fatalf("no paramRef: %+v", out)
	}
}

// The published hook carries its params, and hostd's rebuild from the
// registry gives the same verdict.
func TestParams_PublishedAndRebuilt_RLC7(t *testing.T) {
	h := newTestHost("bash")
	mustLoad(t, h, WithParams(factorySource("guard", nil, hookFactory(celHook(t, "length", vocab.BeforeToolCall,
		"call.arguments.command.size() <= int(params['maxCommand'])"))),
		&contract.HookParams{From: "team-a/guard", Values: map[string]string{"maxCommand": "4"}}))
	reg := h.Registry()
	if p := reg.Hooks[0].Params; p == nil || p.Values["maxCommand"] != "4" || p.From != "team-a/guard" {
		t.Fatalf("published params %+v", reg.Hooks[0].Params)
	}
	rebuilt, outcomes := NewHostFromRegistry(context.Background(), reg, testWorkspace, nil)
	if outcomes[0].State != vocab.ExtensionLoaded {
		t.Fatalf("rebuild: %+v", outcomes)
	}
	if d := rebuilt.Decide(context.Background(), ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"command": "make test"}}); d.Blocked == nil {
		t.Fatal("the rebuilt host lost the params")
	}
}

// A hook emits a typed message of a type its extension declared; the
// outcome carries it with the extension. An undeclared type fails the hook
// (closed at a blocking event), naming the type and what is declared.
func TestEvent_CustomMessage_RLC8(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("ci", nil, func(api API) error {
		api.DeclareMessageType(MessageTypeDecl{Type: "ci/status", InContext: true, Template: "CI status (from the pipeline, not the user): {{content}}"})
		return hookFactory(
			celHook(t, "status", vocab.SessionStart, "{'customMessage': {'type': 'ci/status', 'content': 'main is green'}}"),
			celHook(t, "bad", vocab.UserInput, "{'customMessage': {'type': 'ci/other', 'content': 'x'}}"),
		)(api)
	}))
	ctx := context.Background()
	out, err := h.Event(ctx, EventRequest{Event: vocab.SessionStart})
	if err != nil || !out.Allowed || len(out.Messages) != 1 || out.Messages[0] != (CustomMessage{Type: "ci/status", Content: "main is green", Extension: "ci", InContext: true,
		Text: "CI status (from the pipeline, not the user): main is green"}) {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if mt := h.Registry().MessageTypes; len(mt) != 1 || mt[0].Template != "CI status (from the pipeline, not the user): {{content}}" {
		t.Fatalf("published types %+v", mt)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.UserInput, Prompt: &Prompt{Text: "hi"}})
	if out.Allowed || !strings.Contains(out.Diagnostics[0].Message, `message type "ci/other" is not declared by extension ci (it declares ci/status)`) {
		t.Fatalf("undeclared type: %+v", out)
	}
}

func TestMessageTemplate_CheckedAndRenderedOnce_RLC8(t *testing.T) {
	for tmpl, want := range map[string]string{
		"":                        "",
		"note: {{content}}":       "",
		"{{ content }}":           "must contain {{content}}",
		"{{user}} {{content}}":    "names {{user}}",
		"no placeholder":          "must contain {{content}}",
		strings.Repeat("x", 5000): "more than the limit",
	} {
		err := CheckMessageTemplate(tmpl)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%.40q: %v, want %q", tmpl, err, want)
		}
	}
	if got := RenderMessage("[{{content}}]", "a {{content}} b"); got != "[a {{content}} b]" {
		t.Fatalf("rendered %q", got)
	}
	h := newTestHost()
	out := h.Load(context.Background(), factorySource("bad", nil, func(api API) error {
		api.DeclareMessageType(MessageTypeDecl{Type: "t", Template: "{{who}}"})
		return nil
	}), true)
	if out.State == vocab.ExtensionLoaded || !strings.Contains(out.Message, `message type "t": template names {{who}}`) {
		t.Fatalf("load %+v", out)
	}
}
