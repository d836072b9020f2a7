package extobject

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

var testWorkspace = exthost.WorkspaceInfo{Name: "ws", Namespace: "team-a"}

// newTestHost is a host with the named built-in tools, as the controller
// builds one for a Workspace.
func newTestHost(builtin ...string) *exthost.Host {
	var tools []contract.Tool
	for _, b := range builtin {
		tools = append(tools, contract.Tool{Name: b, Description: b + " tool"})
	}
	return exthost.NewHost(exthost.Options{Builtin: tools, Workspace: testWorkspace})
}

func mustLoad(t *testing.T, h *exthost.Host, src exthost.Source) {
	t.Helper()
	if out := h.Load(context.Background(), src, true); out.State != vocab.ExtensionLoaded {
		t.Fatalf("load %s: %s %s: %s", src.ID, out.State, out.Reason, out.Message)
	}
}

// coreCounter is a tool core that counts its calls and echoes the note.
type coreCounter struct{ calls atomic.Int32 }

func (c *coreCounter) run(_ context.Context, call exthost.ToolCall) (exthost.ToolResult, error) {
	c.calls.Add(1)
	text, _ := call.Arguments["text"].(string)
	return exthost.ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: []exthost.Content{{Type: "text", Text: "noted: " + text}}}, nil
}

func call(id, name, text string) exthost.ToolCall {
	return exthost.ToolCall{ID: id, Name: name, Arguments: map[string]any{"text": text}}
}

// assertPaired checks a blocked result answers its own call and says why.
func assertPaired(t *testing.T, c exthost.ToolCall, r exthost.ToolResult) {
	t.Helper()
	if r.ToolCallID != c.ID || r.ToolName != c.Name || !r.IsError || r.Details["blocked"] != true {
		t.Fatalf("result not paired with call %s/%s or not marked blocked: %+v", c.ID, c.Name, r)
	}
}
