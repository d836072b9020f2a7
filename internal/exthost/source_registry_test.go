package exthost

import (
	"context"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// hostd rebuilds the controller's hook runtime from the published registry:
// same registry, same decisions.
func TestNewHostFromRegistry_RoundTrip(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks = append(ext.Spec.Hooks, v1alpha1.ExtensionHook{Name: "remote", Event: vocab.AfterToolResult,
		Webhook: &v1alpha1.WebhookHook{Service: v1alpha1.ServiceReference{Name: "audit", Port: 80, Path: "/audit"}}})
	ctrl := NewHost(Options{Builtin: []contract.Tool{{Name: "bash"}}, Deny: []string{"bash"}, Workspace: testWorkspace})
	mustLoad(t, ctrl, FromObject(ext, nil))
	mustLoad(t, ctrl, factorySource("hooks-only", nil, hookFactory(Hook{Name: "first-look", Event: vocab.BeforeToolCall,
		Handler: mustCEL(t, vocab.BeforeToolCall, "call.name != 'forbidden'")})))
	published := ctrl.Registry()

	agent, outcomes := NewHostFromRegistry(context.Background(), published, testWorkspace, nil)
	for _, o := range outcomes {
		if o.State != vocab.ExtensionLoaded {
			t.Fatalf("outcome %+v", o)
		}
	}
	if got, want := jsonOf(t, agent.Registry()), jsonOf(t, published); got != want {
		t.Fatalf("registry round trip\n got %s\nwant %s", got, want)
	}
	secret := call("s", "review_note", "SECRET")
	if r, _ := agent.Before(context.Background(), secret); r == nil || r.ToolCallID != "s" {
		t.Fatalf("agent host allowed a secret note: %+v", r)
	}
	if r, _ := agent.Before(context.Background(), call("b", "bash", "")); r == nil || r.Details["policy"] != "deny" {
		t.Fatalf("agent host lost the deny list: %+v", r)
	}

	// Without the extensions list, order is rebuilt from first appearance.
	published.Extensions = nil
	agent, _ = NewHostFromRegistry(context.Background(), published, testWorkspace, nil)
	if got := agent.Extensions(); len(got) != 2 || got[0] != "review-extension" {
		t.Fatalf("order without extensions list: %v", got)
	}
}

func TestNewHostFromRegistry_HookWithoutWireFormRejected(t *testing.T) {
	reg := contract.Registry{Hooks: []contract.Hook{{Extension: "go-only", Name: "h", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10}}}
	_, outcomes := NewHostFromRegistry(context.Background(), reg, testWorkspace, nil)
	if len(outcomes) != 1 || outcomes[0].State != vocab.ExtensionRejected || outcomes[0].Reason != ReasonInvalid {
		t.Fatalf("outcomes %+v", outcomes)
	}
}
