package exthost

import (
	"context"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// BenchmarkEvent_UserInput is the cost one CEL UserInput hook adds to a
// prompt ("none" is the same event with no hook), in process; hostd's HTTP
// round trip comes on top (docs/benchmarks.md).
func BenchmarkEvent_UserInput(b *testing.B) {
	req := EventRequest{Event: vocab.UserInput, Session: SessionInfo{ID: "s-1"},
		Prompt: &Prompt{Text: "review parser.go and fix the error path; the token is in the vault"}}
	run := func(b *testing.B, h *Host) {
		b.Helper()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if out, err := h.Event(ctx, req); err != nil || !out.Allowed {
				b.Fatalf("%+v %v", out, err)
			}
		}
	}
	b.Run("none", func(b *testing.B) { run(b, newTestHost()) })
	b.Run("redact", func(b *testing.B) {
		h := newTestHost()
		mustLoad(&testing.T{}, h, factorySource("ext", nil, hookFactory(benchHook(b, "redact", vocab.UserInput,
			"prompt.text.contains('SECRET') ? {'input': prompt.text.replace('SECRET', '***'), 'context': 'redacted'} : {'context': 'tenant ' + workspace.namespace}"))))
		run(b, h)
	})
}

// BenchmarkExecute_RewritingBeforeHook is the cost of a BeforeToolCall hook
// that rewrites every call (terraform apply gains -dry-run), merge and
// schema re-check included, against the same call with a hook that only
// allows it.
func BenchmarkExecute_RewritingBeforeHook(b *testing.B) {
	core := func(_ context.Context, c ToolCall) (ToolResult, error) {
		return ToolResult{Content: []Content{{Type: "text", Text: "ok"}}}, nil
	}
	c := ToolCall{ID: "call-1", Name: "terraform", Arguments: map[string]any{"command": "terraform apply"}}
	run := func(b *testing.B, expr string, rewritten bool) {
		b.Helper()
		h := newTestHost()
		mustLoad(&testing.T{}, h, factorySource("tf", nil, func(api API) error {
			api.RegisterTool(Tool{Name: "terraform", Description: "runs terraform",
				InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)})
			api.On(benchHook(b, "dry-run", vocab.BeforeToolCall, expr))
			return nil
		}))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if r, d := h.ExecuteDecided(ctx, c, core); r.IsError || d.Rewritten != rewritten {
				b.Fatalf("%+v %+v", r, d)
			}
		}
	}
	b.Run("allow", func(b *testing.B) {
		run(b, "call.arguments.command.startsWith('terraform apply') && !call.arguments.command.contains('-dry-run') ? true : true", false)
	})
	b.Run("rewrite", func(b *testing.B) {
		run(b, "call.arguments.command.startsWith('terraform apply') && !call.arguments.command.contains('-dry-run') ? {'arguments': {'command': call.arguments.command + ' -dry-run'}} : {}", true)
	})
}

func benchHook(b *testing.B, name string, event vocab.HookEvent, expr string) Hook {
	b.Helper()
	h, err := CompileCEL(event, expr, "")
	if err != nil {
		b.Fatal(err)
	}
	return Hook{Name: name, Event: event, Handler: h}
}
