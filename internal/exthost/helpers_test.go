package exthost

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

var testWorkspace = WorkspaceInfo{Name: "ws", Namespace: "team-a"}

func newTestHost(builtin ...string) *Host {
	var tools []contract.Tool
	for _, b := range builtin {
		tools = append(tools, contract.Tool{Name: b, Description: b + " tool"})
	}
	return NewHost(Options{Builtin: tools, Workspace: testWorkspace})
}

// factorySource is a Source whose import returns f and counts its calls.
func factorySource(id string, imports *atomic.Int32, f Factory) Source {
	return Source{ID: id, Namespace: "team-a", Import: func(context.Context, Env) (Factory, error) {
		if imports != nil {
			imports.Add(1)
		}
		return f, nil
	}}
}

func mustLoad(t *testing.T, h *Host, src Source) {
	t.Helper()
	if out := h.Load(context.Background(), src, true); out.State != vocab.ExtensionLoaded {
		t.Fatalf("load %s: %s %s: %s", src.ID, out.State, out.Reason, out.Message)
	}
}

// coreCounter is a core that counts its calls and echoes the call's text.
type coreCounter struct{ calls atomic.Int32 }

func (c *coreCounter) run(_ context.Context, call ToolCall) (ToolResult, error) {
	c.calls.Add(1)
	text, _ := call.Arguments["text"].(string)
	return ToolResult{
		ToolCallID: call.ID, ToolName: call.Name,
		Content: []Content{{Type: "text", Text: "noted: " + text}},
		Details: map[string]any{"length": float64(len(text)), "tags": []any{"a"}},
	}, nil
}

// recorder is a Go hook that records what it saw and answers a fixed verdict.
type recorder struct {
	calls   atomic.Int32
	verdict Verdict
	seen    chan Input
}

func (r *recorder) Evaluate(_ context.Context, in Input) (Verdict, error) {
	r.calls.Add(1)
	if r.seen != nil {
		r.seen <- in
	}
	return r.verdict, nil
}

func allow() *recorder { return &recorder{verdict: Verdict{Allowed: true}} }

func hookFactory(hooks ...Hook) Factory {
	return func(api API) error {
		for _, h := range hooks {
			api.On(h)
		}
		return nil
	}
}

func call(id, name, text string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: map[string]any{"text": text}}
}

// hookTexts is the texts hooks added, joined by a blank line, without their
// origin headings.
func hookTexts(out EventOutcome) string {
	texts := make([]string, len(out.Contexts))
	for i, c := range out.Contexts {
		texts[i] = c.Text
	}
	return strings.Join(texts, "\n\n")
}
