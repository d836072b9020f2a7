package exthost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// orderHook appends its name to a shared log and answers verdict.
func orderHook(log *[]string, mu *sync.Mutex, name string, allowed bool) Hook {
	return Hook{Name: name, Event: vocab.BeforeToolCall, Handler: HandlerFunc(func(context.Context, Input) (Verdict, error) {
		mu.Lock()
		*log = append(*log, name)
		mu.Unlock()
		return Verdict{Allowed: allowed, Message: name + " says no"}, nil
	})}
}

func assertPaired(t *testing.T, c ToolCall, r ToolResult) {
	t.Helper()
	if r.ToolCallID != c.ID || r.ToolName != c.Name || !r.IsError {
		t.Fatalf("result not paired with call %s/%s: %+v", c.ID, c.Name, r)
	}
	if r.Details["blocked"] != true || r.Details["reason"] == "" {
		t.Fatalf("blocked result lacks its reason in details: %+v", r.Details)
	}
}

func TestExecute_BeforeHooksInOrderFirstDenyShortCircuits_RHK1_RHK2(t *testing.T) {
	var log []string
	var mu sync.Mutex
	h := newTestHost()
	mustLoad(t, h, factorySource("a", nil, hookFactory(orderHook(&log, &mu, "a1", true), orderHook(&log, &mu, "a2", false))))
	mustLoad(t, h, factorySource("b", nil, hookFactory(orderHook(&log, &mu, "b1", true))))
	core := &coreCounter{}

	c := call("call-1", "review_note", "hi")
	r, diags := h.Execute(context.Background(), c, core.run)

	if !reflect.DeepEqual(log, []string{"a1", "a2"}) {
		t.Fatalf("hooks ran %v, want a1,a2 then stop", log)
	}
	if core.calls.Load() != 0 {
		t.Fatal("core ran after a deny")
	}
	assertPaired(t, c, r)
	if r.Content[0].Text != "a2 says no" || r.Details["hook"] != "a2" || r.Details["extension"] != "a" {
		t.Fatalf("deny reason not reported: %+v", r)
	}
	if len(diags) != 0 {
		t.Fatalf("a deny is a policy decision, got diagnostics %+v", diags)
	}
}

func TestExecute_AllAllowRunsCoreExactlyOnce_RHK4(t *testing.T) {
	h := newTestHost()
	a, b := allow(), allow()
	mustLoad(t, h, factorySource("a", nil, hookFactory(
		Hook{Name: "one", Event: vocab.BeforeToolCall, Handler: a},
		Hook{Name: "two", Event: vocab.BeforeToolCall, Handler: b})))
	core := &coreCounter{}
	r, diags := h.Execute(context.Background(), call("c", "t", "x"), core.run)
	if core.calls.Load() != 1 || a.calls.Load() != 1 || b.calls.Load() != 1 {
		t.Fatalf("core %d, hooks %d %d", core.calls.Load(), a.calls.Load(), b.calls.Load())
	}
	if r.IsError || r.Content[0].Text != "noted: x" || len(diags) != 0 {
		t.Fatalf("result %+v diags %+v", r, diags)
	}
}

func TestExecute_BeforeHookFailureFailsClosed_RHK3(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tests := []struct {
		name    string
		handler Handler
		timeout time.Duration
		kind    DiagnosticKind
		message string
	}{
		{"error", HandlerFunc(func(context.Context, Input) (Verdict, error) { return Verdict{}, errors.New("db down") }), 0, DiagnosticError, "db down"},
		{"panic", HandlerFunc(func(context.Context, Input) (Verdict, error) { panic("nil map") }), 0, DiagnosticError, "panicked: nil map"},
		{"hang ignoring ctx", HandlerFunc(func(context.Context, Input) (Verdict, error) {
			<-release
			return Verdict{Allowed: true}, nil
		}), 30 * time.Millisecond, DiagnosticTimeout, "no answer within 30ms"},
		{"cel runtime error", mustCEL(t, vocab.BeforeToolCall, "call.arguments.missing == 'x'"), 0, DiagnosticError, "no such key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHost()
			later := allow()
			mustLoad(t, h, factorySource("guard", nil, hookFactory(
				Hook{Name: "check", Event: vocab.BeforeToolCall, Timeout: tt.timeout, Handler: tt.handler},
				Hook{Name: "later", Event: vocab.BeforeToolCall, Handler: later})))
			after := allow()
			mustLoad(t, h, factorySource("obs", nil, hookFactory(Hook{Name: "obs", Event: vocab.AfterToolResult, Handler: after})))
			core := &coreCounter{}
			c := call("id-7", "write", "x")

			start := time.Now()
			r, diags := h.Execute(context.Background(), c, core.run)
			if time.Since(start) > 2*time.Second {
				t.Fatal("host kept waiting past the timeout")
			}
			assertPaired(t, c, r)
			if core.calls.Load() != 0 || later.calls.Load() != 0 || after.calls.Load() != 0 {
				t.Fatalf("ran after failure: core %d later %d after %d", core.calls.Load(), later.calls.Load(), after.calls.Load())
			}
			if len(diags) != 1 {
				t.Fatalf("diagnostics = %+v", diags)
			}
			d := diags[0]
			if d.ExtensionID != "guard" || d.Hook != "check" || d.Kind != tt.kind || !strings.Contains(d.Message, tt.message) {
				t.Fatalf("diagnostic = %+v, want kind %s containing %q", d, tt.kind, tt.message)
			}
		})
	}
}

func TestExecute_AfterHooksObserveAndFailuresOnlyDiagnose_RHK5(t *testing.T) {
	h := newTestHost()
	var order []string
	var mu sync.Mutex
	record := func(name string, err error, allowed bool) Hook {
		return Hook{Name: name, Event: vocab.AfterToolResult, Timeout: 30 * time.Millisecond, Handler: HandlerFunc(func(ctx context.Context, in Input) (Verdict, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			if in.Result == nil || in.Result.Content[0].Text != "noted: x" {
				t.Errorf("%s did not observe the core result: %+v", name, in.Result)
			}
			if name == "slow" {
				<-ctx.Done()
				time.Sleep(10 * time.Millisecond)
			}
			return Verdict{Allowed: allowed, Message: name + " finding"}, err
		})}
	}
	mustLoad(t, h, factorySource("audit", nil, hookFactory(
		record("throws", errors.New("log sink down"), true),
		record("slow", nil, true),
		record("flags", nil, false),
		record("last", nil, true),
		Hook{Name: "panics", Event: vocab.AfterToolResult, Handler: HandlerFunc(func(context.Context, Input) (Verdict, error) { panic("x") })},
	)))
	core := &coreCounter{}
	r, diags := h.Execute(context.Background(), call("c", "t", "x"), core.run)

	if core.calls.Load() != 1 {
		t.Fatalf("core ran %d times", core.calls.Load())
	}
	if r.IsError || r.Content[0].Text != "noted: x" {
		t.Fatalf("after hook changed the result: %+v", r)
	}
	if !reflect.DeepEqual(order, []string{"throws", "slow", "flags", "last"}) {
		t.Fatalf("after hooks order %v", order)
	}
	var kinds []string
	for _, d := range diags {
		kinds = append(kinds, d.Hook+":"+string(d.Kind))
	}
	if want := []string{"throws:error", "slow:timeout", "flags:audit", "panics:error"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("diagnostics %v, want %v", kinds, want)
	}
}

func TestExecute_BlockedCallTriggersNoAfterHook_RHK5(t *testing.T) {
	h := newTestHost()
	after := allow()
	mustLoad(t, h, factorySource("x", nil, hookFactory(
		Hook{Name: "deny", Event: vocab.BeforeToolCall, Handler: &recorder{verdict: Verdict{Message: "no"}}},
		Hook{Name: "obs", Event: vocab.AfterToolResult, Handler: after})))
	h.Execute(context.Background(), call("c", "t", "x"), (&coreCounter{}).run)
	if after.calls.Load() != 0 {
		t.Fatal("after hook ran for a blocked call")
	}
}

func TestExecute_HooksGetPrivateCopiesCallerGetsCopy_RHK6(t *testing.T) {
	h := newTestHost()
	mutate := func(in Input) {
		in.Call.Arguments["text"] = "tampered"
		in.Call.Arguments["nested"].(map[string]any)["k"] = "tampered"
		if in.Result != nil {
			in.Result.Content[0].Text = "tampered"
			in.Result.Details["tags"].([]any)[0] = "tampered"
			in.Result.Details["new"] = true
		}
	}
	var seenByLater []Input
	var mu sync.Mutex
	spy := func(in Input) { mu.Lock(); seenByLater = append(seenByLater, in); mu.Unlock() }
	// Each hook does f to its input and allows the call.
	allowAfter := func(f func(Input)) Handler {
		return HandlerFunc(func(_ context.Context, in Input) (Verdict, error) {
			f(in)
			return Verdict{Allowed: true}, nil
		})
	}
	mustLoad(t, h, factorySource("evil", nil, hookFactory(
		Hook{Name: "b1", Event: vocab.BeforeToolCall, Handler: allowAfter(mutate)},
		Hook{Name: "b2", Event: vocab.BeforeToolCall, Handler: allowAfter(spy)},
		Hook{Name: "a1", Event: vocab.AfterToolResult, Handler: allowAfter(mutate)},
		Hook{Name: "a2", Event: vocab.AfterToolResult, Handler: allowAfter(spy)},
	)))
	var coreResult ToolResult
	var coreSaw ToolCall
	core := func(ctx context.Context, c ToolCall) (ToolResult, error) {
		coreSaw = c
		r, _ := (&coreCounter{}).run(ctx, c)
		coreResult = r
		return r, nil
	}
	c := ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"text": "orig", "nested": map[string]any{"k": "v"}}}
	got, _ := h.Execute(context.Background(), c, core)

	if c.Arguments["text"] != "orig" || c.Arguments["nested"].(map[string]any)["k"] != "v" {
		t.Fatalf("caller's call mutated: %+v", c.Arguments)
	}
	if coreSaw.Arguments["text"] != "orig" {
		t.Fatalf("core saw a hook's mutation: %+v", coreSaw.Arguments)
	}
	for _, in := range seenByLater {
		if in.Call.Arguments["text"] != "orig" {
			t.Fatalf("later hook saw an earlier hook's mutation of the call")
		}
		if in.Result != nil && (in.Result.Content[0].Text != "noted: orig" || in.Result.Details["new"] != nil) {
			t.Fatalf("later after hook saw an earlier hook's mutation of the result: %+v", in.Result)
		}
	}
	if !reflect.DeepEqual(got, coreResult) {
		t.Fatalf("caller result %+v is not deep-equal to the core's %+v", got, coreResult)
	}
	got.Details["tags"].([]any)[0] = "caller"
	got.Content[0].Text = "caller"
	if coreResult.Details["tags"].([]any)[0] != "a" || coreResult.Content[0].Text != "noted: orig" {
		t.Fatal("caller's result shares memory with the core's")
	}
}

func TestHookTimeoutBounds_RHK7(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{
		{0, 10 * time.Second}, {-time.Second, 10 * time.Second}, {time.Second, time.Second},
		{45 * time.Second, 30 * time.Second}, {30 * time.Second, 30 * time.Second},
	} {
		if got := effectiveTimeout(tt.in); got != tt.want {
			t.Errorf("effectiveTimeout(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// A timed-out hook is not killed: the host returns, the hook keeps running
// and finishes later on its own copy (rule R-HK-7).
func TestExecute_TimeoutStopsWaitingButDoesNotKill_RHK7(t *testing.T) {
	h := newTestHost()
	finished := make(chan struct{})
	mustLoad(t, h, factorySource("slow", nil, hookFactory(Hook{Name: "slow", Event: vocab.BeforeToolCall, Timeout: 20 * time.Millisecond,
		Handler: HandlerFunc(func(_ context.Context, in Input) (Verdict, error) {
			time.Sleep(80 * time.Millisecond)
			in.Call.Arguments["text"] = "late write"
			close(finished)
			return Verdict{Allowed: true}, nil
		})})))
	c := call("c", "t", "x")
	r, diags := h.Execute(context.Background(), c, (&coreCounter{}).run)
	if !r.IsError || len(diags) != 1 || diags[0].Kind != DiagnosticTimeout {
		t.Fatalf("result %+v diags %+v", r, diags)
	}
	select {
	case <-finished:
		t.Fatal("host waited for the hook to finish")
	default:
	}
	select {
	case <-finished:
	case <-time.After(2 * time.Second):
		t.Fatal("the timed-out hook was stopped instead of left to finish")
	}
	if c.Arguments["text"] != "x" {
		t.Fatal("late hook wrote into the caller's call")
	}
}

func TestExecute_DeniedToolStaysDeniedWhoeverRegisteredIt_REXT5(t *testing.T) {
	before := allow()
	after := allow()
	h := NewHost(Options{Deny: []string{"review_note", "bash"}, Workspace: testWorkspace})
	mustLoad(t, h, factorySource("review-extension", nil, func(api API) error {
		api.RegisterTool(Tool{Name: "review_note"})
		api.On(Hook{Name: "b", Event: vocab.BeforeToolCall, Handler: before})
		api.On(Hook{Name: "a", Event: vocab.AfterToolResult, Handler: after})
		return nil
	}))
	core := &coreCounter{}
	for _, name := range []string{"review_note", "bash"} {
		c := call("id-"+name, name, "x")
		r, diags := h.Execute(context.Background(), c, core.run)
		assertPaired(t, c, r)
		if r.Details["policy"] != "deny" || len(diags) != 0 {
			t.Fatalf("%s: result %+v diags %+v", name, r, diags)
		}
		if got := h.After(context.Background(), c, r); got != nil {
			t.Fatalf("After ran hooks for a denied tool: %+v", got)
		}
	}
	if core.calls.Load() != 0 || before.calls.Load() != 0 || after.calls.Load() != 0 {
		t.Fatalf("denied calls ran: core %d before %d after %d", core.calls.Load(), before.calls.Load(), after.calls.Load())
	}
	if got := h.Registry().Deny; !reflect.DeepEqual(got, []string{"bash", "review_note"}) {
		t.Fatalf("published deny list %v", got)
	}
}

func TestExecute_HookMatchLimitsTools(t *testing.T) {
	h := newTestHost()
	only := &recorder{verdict: Verdict{Message: "blocked"}}
	mustLoad(t, h, factorySource("m", nil, hookFactory(Hook{Name: "only", Event: vocab.BeforeToolCall, Tools: []string{"rm"}, Handler: only})))
	core := &coreCounter{}
	if r, _ := h.Execute(context.Background(), call("1", "ls", ""), core.run); r.IsError {
		t.Fatal("hook for rm blocked ls")
	}
	if r, _ := h.Execute(context.Background(), call("2", "rm", ""), core.run); !r.IsError {
		t.Fatal("hook for rm did not block rm")
	}
	if only.calls.Load() != 1 || core.calls.Load() != 1 {
		t.Fatalf("hook %d core %d", only.calls.Load(), core.calls.Load())
	}
}

func TestExecute_CoreErrorAndPanicBecomePairedErrorResults(t *testing.T) {
	h := newTestHost()
	obs := allow()
	mustLoad(t, h, factorySource("o", nil, hookFactory(Hook{Name: "o", Event: vocab.AfterToolResult, Handler: obs})))
	c := call("c", "t", "")
	r, _ := h.Execute(context.Background(), c, func(context.Context, ToolCall) (ToolResult, error) { return ToolResult{}, errors.New("ENOENT") })
	if r.ToolCallID != "c" || !r.IsError || r.Content[0].Text != "ENOENT" {
		t.Fatalf("core error result %+v", r)
	}
	r, _ = h.Execute(context.Background(), c, func(context.Context, ToolCall) (ToolResult, error) { panic("bad") })
	if r.ToolName != "t" || !r.IsError || !strings.Contains(r.Content[0].Text, "bad") {
		t.Fatalf("core panic result %+v", r)
	}
	if obs.calls.Load() != 2 {
		t.Fatalf("after hooks observe failed tools too: %d", obs.calls.Load())
	}
}

// Concurrent calls while extensions load: every call sees whole extensions
// only, and -race sees no shared mutable state (rule R-EXT-2, R-HK-6).
func TestExecute_ConcurrentCallsAndLoads_RHK6(t *testing.T) {
	h := newTestHost("bash")
	mustLoad(t, h, factorySource("guard", nil, hookFactory(Hook{Name: "secret", Event: vocab.BeforeToolCall,
		Handler: mustCEL(t, vocab.BeforeToolCall, "!has(call.arguments.text) || !call.arguments.text.contains('SECRET')")})))
	core := &coreCounter{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				text := "ok"
				if j%2 == 0 {
					text = "SECRET"
				}
				c := ToolCall{ID: "c", Name: "bash", Arguments: map[string]any{"text": text, "n": []any{float64(i), float64(j)}}}
				r, _ := h.Execute(context.Background(), c, core.run)
				if r.IsError != (text == "SECRET") {
					t.Errorf("call %d/%d: isError %v for %q", i, j, r.IsError, text)
					return
				}
			}
		})
	}
	for i := range 20 {
		wg.Go(func() {
			id := "ext-" + string(rune('a'+i))
			out := h.Load(context.Background(), factorySource(id, nil, hookFactory(
				Hook{Name: "obs", Event: vocab.AfterToolResult, Handler: allow()})), true)
			if out.State != vocab.ExtensionLoaded {
				t.Errorf("load %s: %+v", id, out)
			}
		})
	}
	wg.Wait()
	if got := core.calls.Load(); got != 8*100 {
		t.Fatalf("core ran %d times, want %d", got, 800)
	}
	if len(h.Extensions()) != 21 {
		t.Fatalf("extensions %v", h.Extensions())
	}
}
