package exthost

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// A hook's CEL may return a bool or a map of the outcomes its event allows;
// a key another event owns, or a value of the wrong type, is refused when
// the hook compiles, with the key named. So are expressions that do not
// parse, return another type, or read a variable the event does not
// declare.
func TestCompileCEL_OutcomeKeysAndVariablesCheckedPerEvent(t *testing.T) {
	checkCompileCases(t, []compileCase{
		{vocab.BeforeToolCall, "true", ""},
		{vocab.BeforeToolCall, "{'allow': false, 'message': 'no'}", ""},
		{vocab.BeforeToolCall, "{'arguments': {'command': call.arguments.command + ' -dry-run'}}", ""},
		{vocab.BeforeToolCall, "call.name == 'bash' ? {'ask': true, 'message': 'sure?'} : {'allow': true}", ""},
		{vocab.UserInput, "{'input': prompt.text.replace('SECRET', '***'), 'context': 'tenant a'}", ""},
		{vocab.SessionStart, "{'context': 'tenant ' + workspace.namespace}", ""},
		{vocab.SessionEnd, "session.reason != 'crash'", ""},
		{vocab.BeforeToolCall, "{'input': 'x'}", `outcome key "input" is not allowed for BeforeToolCall`},
		{vocab.UserInput, "{'arguments': {}}", `outcome key "arguments" is not allowed for UserInput`},
		{vocab.AfterToolResult, "{'context': 'x'}", `outcome key "context" is not allowed for AfterToolResult`},
		{vocab.SessionStart, "{'allow': 'yes'}", `outcome key "allow" must be a bool, not string`},
		{vocab.UserInput, "{'context': 1}", `outcome key "context" must be a string, not int`},
		{vocab.BeforeToolCall, "{'arguments': 'x'}", `outcome key "arguments" must be a map`},
		{vocab.BeforeToolCall, "true ? {'allow': true} : {'colour': false}", `unknown outcome key "colour"`},
		{vocab.BeforeToolCall, "'allow'", "must evaluate to bool or to a map of outcomes"},
		{vocab.SessionStart, "call.name == 'x'", "undeclared reference to 'call'"},
		{vocab.BeforeToolCall, "prompt.text == 'x'", "undeclared reference to 'prompt'"},
		{vocab.BeforeToolCall, "call.name ==", "Syntax error"},
		{vocab.BeforeToolCall, "call.name", "not string"},   // call.name is a string: not an outcome
		{vocab.BeforeToolCall, "call.arguments.dryRun", ""}, // arguments are open (dyn): checked at run time
		{vocab.BeforeToolCall, "'x' + 'y'", "must evaluate to bool"},
		{vocab.BeforeToolCall, "result.isError", "undeclared reference to 'result'"},
		{vocab.AfterToolResult, "request.user == 'x'", "undeclared reference"},
		{vocab.HookEvent("Sometime"), "true", "unknown hook event"},
	})
}

// What the checker cannot see (a map built from a dyn value) is checked
// when the hook runs, and a bad key fails a blocking event closed.
func TestCEL_OutcomeKeyFromDynFailsClosedAtEvaluation(t *testing.T) {
	h := newTestHost("bash")
	handler, err := CompileCEL(vocab.BeforeToolCall, "call.arguments.verdict", "")
	if err != nil {
		t.Fatal(err)
	}
	mustLoad(t, h, factorySource("ext", nil, hookFactory(Hook{Name: "dyn", Event: vocab.BeforeToolCall, Handler: handler})))
	d := h.Decide(context.Background(), ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"verdict": map[string]any{"input": "x"}}})
	if d.Blocked == nil || !strings.Contains(d.Blocked.Details["error"].(string), `outcome key "input" is not allowed`) {
		t.Fatalf("decision %+v", d)
	}
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Kind != DiagnosticError {
		t.Fatalf("diagnostics %+v", d.Diagnostics)
	}
}

// An Extension whose hook returns a key its event does not allow is rejected
// at load (the controller's reconcile), the reason naming the hook and key.
func celHook(t *testing.T, name string, event vocab.HookEvent, expr string) Hook {
	t.Helper()
	handler, err := CompileCEL(event, expr, "denied by "+name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Hook{Name: name, Event: event, Handler: handler}
}

// terraformHost has a terraform tool with a schema and hooks that pin
// -dry-run, then check that the next hook sees the rewrite.
func terraformHost(t *testing.T, extra ...Hook) (*Host, *recorder) {
	t.Helper()
	h := newTestHost()
	seen := &recorder{verdict: Verdict{Allowed: true}, seen: make(chan Input, 4)}
	hooks := append([]Hook{
		celHook(t, "dry-run", vocab.BeforeToolCall,
			"call.arguments.command.startsWith('terraform apply') && !call.arguments.command.contains('-dry-run') ? {'arguments': {'command': call.arguments.command + ' -dry-run'}} : {}"),
		celHook(t, "sees-rewrite", vocab.BeforeToolCall, "call.arguments.command.contains('-dry-run') || !call.arguments.command.startsWith('terraform apply')"),
	}, extra...)
	hooks = append(hooks, Hook{Name: "after", Event: vocab.AfterToolResult, Handler: seen})
	mustLoad(t, h, factorySource("tf", nil, func(api API) error {
		api.RegisterTool(Tool{Name: "terraform", Description: "runs terraform",
			InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"],"additionalProperties":false}`)})
		return hookFactory(hooks...)(api)
	}))
	return h, seen
}

// A BeforeToolCall rewrite is what later hooks see, what the core runs and
// what the after hooks see.
func TestExecute_RewriteChainsIntoCoreAndAfterHooks_RHK9(t *testing.T) {
	h, seen := terraformHost(t)
	var ran ToolCall
	res, d := h.ExecuteDecided(context.Background(), ToolCall{ID: "1", Name: "terraform", Arguments: map[string]any{"command": "terraform apply"}},
		func(_ context.Context, c ToolCall) (ToolResult, error) {
			ran = c
			return ToolResult{Content: []Content{{Type: "text", Text: "ok"}}}, nil
		})
	if res.IsError || !d.Rewritten {
		t.Fatalf("result %+v decision %+v", res, d)
	}
	if got := ran.Arguments["command"]; got != "terraform apply -dry-run" {
		t.Fatalf("core ran %v", got)
	}
	if in := <-seen.seen; in.Call.Arguments["command"] != "terraform apply -dry-run" {
		t.Fatalf("after hook saw %v", in.Call.Arguments)
	}
}

// A rewrite that breaks the tool's input schema blocks the call: the core
// never runs.
func TestExecute_RewriteBreakingSchemaIsRefused_RHK9(t *testing.T) {
	h, _ := terraformHost(t, celHook(t, "bad-timeout", vocab.BeforeToolCall, "{'arguments': {'timeout': 'soon'}}"))
	core := &coreCounter{}
	res, d := h.ExecuteDecided(context.Background(), ToolCall{ID: "1", Name: "terraform", Arguments: map[string]any{"command": "terraform plan"}}, core.run)
	if core.calls.Load() != 0 || d.Blocked == nil || !res.IsError {
		t.Fatalf("core ran %d times, result %+v", core.calls.Load(), res)
	}
	if !strings.Contains(res.Content[0].Text, "input schema refuses") || !strings.Contains(res.Content[0].Text, "timeout") {
		t.Fatalf("reason %q", res.Content[0].Text)
	}
}

// Hooks compose in order: the first deny wins over an earlier ask and a
// later allow; an ask with no deny blocks with its message, keeping the
// rewritten call for an agent that asks its user.
func TestDecide_FirstDenyWinsAskBlocksHeadless_RHK1(t *testing.T) {
	ask := celHook(t, "ask", vocab.BeforeToolCall, "{'ask': true, 'message': 'apply to prod?'}")
	deny := celHook(t, "deny", vocab.BeforeToolCall, "{'allow': false, 'message': 'never on fridays'}")
	later := &recorder{verdict: Verdict{Allowed: true}}
	h, _ := terraformHost(t, ask, deny, Hook{Name: "later", Event: vocab.BeforeToolCall, Handler: later})
	d := h.Decide(context.Background(), ToolCall{ID: "1", Name: "terraform", Arguments: map[string]any{"command": "terraform apply"}})
	if d.Asks() || d.Blocked == nil || d.Blocked.Content[0].Text != "never on fridays" || later.calls.Load() != 0 {
		t.Fatalf("decision %+v, later ran %d", d, later.calls.Load())
	}

	h, _ = terraformHost(t, ask)
	d = h.Decide(context.Background(), ToolCall{ID: "1", Name: "terraform", Arguments: map[string]any{"command": "terraform apply"}})
	if !d.Asks() || d.Blocked == nil || d.Blocked.Content[0].Text != "apply to prod?" || d.Call.Arguments["command"] != "terraform apply -dry-run" {
		t.Fatalf("decision %+v", d)
	}
	core := &coreCounter{}
	if res, _ := h.Execute(context.Background(), d.Call, core.run); core.calls.Load() != 0 || res.Content[0].Text != "apply to prod?" {
		t.Fatalf("a headless execute ran an ask: %+v", res)
	}
	// Before cannot run a rewritten call, so it blocks one rather than drop the rewrite.
	h, _ = terraformHost(t)
	if blocked, _ := h.Before(context.Background(), ToolCall{ID: "1", Name: "terraform", Arguments: map[string]any{"command": "terraform apply"}}); blocked == nil {
		t.Fatal("Before allowed a call it cannot run as rewritten")
	}
}

// Session events: rewrites chain, contexts accumulate, the first deny wins
// and drops what came before; a failure blocks a blocking event and is only
// reported for an observing one.
func TestEvent_ComposesInOrder_RLC4(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("ext", nil, hookFactory(
		celHook(t, "redact", vocab.UserInput, "prompt.text.contains('hunter2') ? {'input': prompt.text.replace('hunter2', '***'), 'context': 'redacted'} : {}"),
		celHook(t, "sees-redaction", vocab.UserInput, "{'allow': !prompt.text.contains('hunter2'), 'context': 'tenant ' + workspace.namespace}"),
		celHook(t, "ask-deploys", vocab.UserInput, "{'allow': !prompt.text.contains('deploy'), 'ask': prompt.text.contains('deploy'), 'message': 'deploy?'}"),
		celHook(t, "no-secret", vocab.UserInput, "{'allow': !prompt.text.contains('SECRET'), 'message': 'prompts must not carry secrets'}"),
		celHook(t, "tenant", vocab.SessionStart, "{'context': 'tenant ' + workspace.namespace + ' session ' + session.id}"),
		Hook{Name: "broken", Event: vocab.SessionEnd, Handler: HandlerFunc(func(context.Context, Input) (Verdict, error) { return Verdict{}, context.DeadlineExceeded })},
		Hook{Name: "broken-compact", Event: vocab.BeforeCompact, Handler: HandlerFunc(func(context.Context, Input) (Verdict, error) { return Verdict{}, context.Canceled })},
	)))
	ctx := context.Background()
	out, err := h.Event(ctx, EventRequest{Event: vocab.UserInput, Prompt: &Prompt{Text: "my password is hunter2"}})
	if err != nil || !out.Allowed || out.Input == nil || *out.Input != "my password is ***" || hookTexts(out) != "redacted\n\ntenant team-a" {
		t.Fatalf("UserInput: %+v %v", out, err)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.UserInput, Prompt: &Prompt{Text: "hunter2 and SECRET"}})
	if out.Allowed || out.Message != "prompts must not carry secrets" || out.Hook != "no-secret" || out.Input != nil || out.Context != "" {
		t.Fatalf("denied UserInput: %+v", out)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.UserInput, Prompt: &Prompt{Text: "deploy it"}})
	if out.Allowed || !out.Ask || out.Message != "deploy?" || out.Hook != "ask-deploys" {
		t.Fatalf("an ask with allow false is an ask: %+v", out)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.UserInput, Prompt: &Prompt{Text: "deploy the SECRET"}})
	if out.Allowed || out.Ask || out.Message != "prompts must not carry secrets" {
		t.Fatalf("a later deny wins over an ask: %+v", out)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.SessionStart, Session: SessionInfo{ID: "s1"}})
	if !out.Allowed || hookTexts(out) != "tenant team-a session s1" {
		t.Fatalf("SessionStart: %+v", out)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.SessionEnd})
	if !out.Allowed || len(out.Diagnostics) != 1 || out.Diagnostics[0].Kind != DiagnosticTimeout {
		t.Fatalf("SessionEnd: %+v", out)
	}
	out, _ = h.Event(ctx, EventRequest{Event: vocab.BeforeCompact})
	if out.Allowed || len(out.Diagnostics) != 1 {
		t.Fatalf("BeforeCompact: %+v", out)
	}
	if _, err := h.Event(ctx, EventRequest{Event: vocab.BeforeToolCall}); err == nil {
		t.Fatal("a tool event ran through Event")
	}
}

// ToolFailure hooks see error results only, after the AfterToolResult hooks.
func TestAfter_ToolFailureSeesErrorsOnly(t *testing.T) {
	h := newTestHost("bash")
	failures := &recorder{verdict: Verdict{Allowed: true}, seen: make(chan Input, 2)}
	mustLoad(t, h, factorySource("ext", nil, hookFactory(Hook{Name: "failures", Event: vocab.ToolFailure, Handler: failures})))
	c := ToolCall{ID: "1", Name: "bash"}
	h.After(context.Background(), c, ToolResult{ToolCallID: "1", ToolName: "bash"})
	h.After(context.Background(), c, ToolResult{ToolCallID: "1", ToolName: "bash", IsError: true})
	if failures.calls.Load() != 1 {
		t.Fatalf("ToolFailure ran %d times", failures.calls.Load())
	}
	if in := <-failures.seen; in.Event != vocab.ToolFailure || !in.Result.IsError {
		t.Fatalf("input %+v", in)
	}
}
