package exthost

import (
	"context"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// benchHost has the shape of the hook target in docs/benchmarks.md: 3 CEL before hooks and 2 CEL
// after hooks around every call.
func benchHost(b *testing.B) *Host {
	b.Helper()
	h := newTestHost("bash", "read")
	mustLoad(&testing.T{}, h, factorySource("policy", nil, func(api API) error {
		for _, hk := range []struct {
			name  string
			event vocab.HookEvent
			expr  string
		}{
			{"no-secret", vocab.BeforeToolCall, "!has(call.arguments.text) || !call.arguments.text.contains('SECRET')"},
			{"no-rm", vocab.BeforeToolCall, "call.name != 'bash' || !call.arguments.command.startsWith('rm ')"},
			{"same-ns", vocab.BeforeToolCall, "workspace.namespace == 'team-a'"},
			{"audit-error", vocab.AfterToolResult, "!result.isError"},
			{"audit-size", vocab.AfterToolResult, "size(result.content) < 10"},
		} {
			h, err := CompileCEL(hk.event, hk.expr, "")
			if err != nil {
				b.Fatal(err)
			}
			api.On(Hook{Name: hk.name, Event: hk.event, Handler: h})
		}
		return nil
	}))
	return h
}

func BenchmarkExecute_3CELBefore2CELAfter(b *testing.B) {
	h := benchHost(b)
	core := func(_ context.Context, c ToolCall) (ToolResult, error) {
		return ToolResult{ToolCallID: c.ID, ToolName: c.Name, Content: []Content{{Type: "text", Text: "ok"}}}, nil
	}
	c := ToolCall{ID: "call-1", Name: "bash", Arguments: map[string]any{"command": "ls -la", "text": "hello"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := h.Execute(ctx, c, core); r.IsError {
			b.Fatal("blocked")
		}
	}
}

// BenchmarkLoadObject is what the controller pays per Workspace and
// reconcile for an Extension object with five CEL hooks: trust, import,
// factory (schemas, CEL), commit. "memoised" is the steady case, where
// every Workspace loads the same platform extension; "compiling" clears
// the compile cache before each load, as every load did before it.
