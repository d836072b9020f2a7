package exthost

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

func TestCEL_Variables(t *testing.T) {
	in := Input{
		Call:      ToolCall{ID: "c-1", Name: "bash", Arguments: map[string]any{"command": "ls -la", "n": float64(3), "paths": []any{"a", "b"}}},
		Result:    &ToolResult{ToolCallID: "c-1", ToolName: "bash", IsError: false, Content: []Content{{Type: "text", Text: "total 0"}}, Details: map[string]any{"exit": float64(0)}},
		Workspace: testWorkspace,
	}
	for _, expr := range []string{
		"call.id == 'c-1' && call.name == 'bash'",
		"call.arguments.command.startsWith('ls')",
		"call.arguments.n == 3.0 && size(call.arguments.paths) == 2",
		"workspace.name == 'ws' && workspace.namespace == 'team-a'",
		"result.toolCallId == call.id && !result.isError",
		"result.content[0].text.contains('total') && result.details.exit == 0.0",
		"call.arguments.command.split(' ').size() == 2",
	} {
		h := mustCEL(t, vocab.AfterToolResult, expr)
		v, err := h.Evaluate(context.Background(), in)
		if err != nil || !v.Allowed {
			t.Errorf("%s: verdict %+v err %v", expr, v, err)
		}
	}
}

func TestCEL_DenyMessage(t *testing.T) {
	h, err := CompileCEL(vocab.BeforeToolCall, "call.name != 'rm'", "rm is not allowed")
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.Evaluate(context.Background(), Input{Call: ToolCall{Name: "rm"}})
	if err != nil || v.Allowed || v.Message != "rm is not allowed" {
		t.Fatalf("verdict %+v err %v", v, err)
	}
	def := mustCEL(t, vocab.BeforeToolCall, "call.name != 'rm'")
	v, _ = def.Evaluate(context.Background(), Input{Call: ToolCall{Name: "rm"}})
	if v.Message != "failed expression: call.name != 'rm'" {
		t.Fatalf("default message %q", v.Message)
	}
}

// An expression whose cost grows with the call's arguments stops at the cost
// limit; the before hook then fails closed (rule R-HK-7).
func TestCEL_CostLimitFailsClosed_RHK7(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("costly", nil, hookFactory(Hook{Name: "scan", Event: vocab.BeforeToolCall,
		Handler: mustCEL(t, vocab.BeforeToolCall, "call.arguments.words.all(w, !call.arguments.text.contains(w))")})))
	words := make([]any, 200)
	for i := range words {
		words[i] = "needle-" + strings.Repeat("x", i%7)
	}
	c := ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"words": words, "text": strings.Repeat("haystack ", 200_000)}}
	core := &coreCounter{}
	r, diags := h.Execute(context.Background(), c, core.run)
	assertPaired(t, c, r)
	if core.calls.Load() != 0 || len(diags) != 1 || diags[0].Kind != DiagnosticError || !strings.Contains(diags[0].Message, "cost limit") {
		t.Fatalf("core %d diags %+v", core.calls.Load(), diags)
	}
	// The same expression over a small input is fine: the limit is per evaluation.
	c.Arguments["text"] = "haystack"
	if r, _ := h.Execute(context.Background(), c, core.run); r.IsError {
		t.Fatalf("small input blocked: %+v", r)
	}
}

// A loop that would outlast the hook's timeout is interrupted: the host stops
// waiting and the call fails closed as a timeout (rule R-HK-3, R-HK-7). The
// loop is under the cost limit (a costlier one is refused before it starts)
// and takes milliseconds, far over the 1 ms timeout.
func TestCEL_LoopTimesOut_RHK7(t *testing.T) {
	h := newTestHost()
	mustLoad(t, h, factorySource("loopy", nil, hookFactory(Hook{Name: "spin", Event: vocab.BeforeToolCall, Timeout: time.Millisecond,
		Handler: mustCEL(t, vocab.BeforeToolCall, "call.arguments.items.all(x, x >= 0.0 && x < 1e9)")})))
	items := make([]any, 120_000)
	for i := range items {
		items[i] = float64(i)
	}
	r, diags := h.Execute(context.Background(), ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"items": items}}, (&coreCounter{}).run)
	if !r.IsError || len(diags) != 1 || diags[0].Kind != DiagnosticTimeout {
		t.Fatalf("result %+v diags %+v", r, diags)
	}
}

func TestCEL_NonBoolAtRuntimeFailsClosed_RHK3(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, "call.arguments.flag")
	if _, err := h.Evaluate(context.Background(), Input{Call: ToolCall{Arguments: map[string]any{"flag": "yes"}}}); err == nil {
		t.Fatal("a string verdict was accepted")
	}
}

func TestCEL_HonoursCancellation(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, "call.arguments.items.all(x, x >= 0.0)")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	items := make([]any, 5000)
	for i := range items {
		items[i] = float64(i)
	}
	if _, err := h.Evaluate(ctx, Input{Call: ToolCall{Arguments: map[string]any{"items": items}}}); err == nil {
		t.Fatal("evaluation ignored a cancelled context")
	}
}

// TestCompileCEL_Memoised: one compilation per (event, expression, message);
// errors are remembered too; a full cache starts over instead of growing.
func TestCompileCEL_Memoised(t *testing.T) {
	a, err := CompileCEL(vocab.BeforeToolCall, "call.name != 'memo'", "m")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := CompileCEL(vocab.BeforeToolCall, "call.name != 'memo'", "m"); b != a {
		t.Error("the same hook compiled twice")
	}
	if c, _ := CompileCEL(vocab.BeforeToolCall, "call.name != 'memo'", "other message"); c == a {
		t.Error("a different message shared the compiled handler")
	}
	if _, err := CompileCEL(vocab.BeforeToolCall, "result.isError", "m"); err == nil {
		t.Error("before hook reading result compiled")
	} else if _, again := CompileCEL(vocab.BeforeToolCall, "result.isError", "m"); again == nil || again.Error() != err.Error() {
		t.Errorf("memoised error %v, want %v", again, err)
	}

	cache := &celCache{}
	compiles := 0
	compile := func() (Handler, error) { compiles++; return nil, nil }
	for i := range celCacheSize + 1 {
		_, _ = cache.get(celKey{expression: fmt.Sprint(i)}, compile)
	}
	if len(cache.entries) != 1 || compiles != celCacheSize+1 {
		t.Errorf("after %d distinct keys: %d entries, %d compiles; want a fresh cache holding 1", celCacheSize+1, len(cache.entries), compiles)
	}
	_, _ = cache.get(celKey{expression: fmt.Sprint(celCacheSize)}, compile)
	if compiles != celCacheSize+1 {
		t.Error("the newest key was compiled again")
	}
}
