package extobject

import (
	"context"
	"reflect"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

func TestNewHostFromRegistry_RoundTrip(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks = append(ext.Spec.Hooks, v1alpha1.ExtensionHook{Name: "remote", Event: vocab.AfterToolResult,
		Webhook: &v1alpha1.WebhookHook{Service: v1alpha1.ServiceReference{Name: "audit", Port: 80, Path: "/audit"}}})
	ctrl := exthost.NewHost(exthost.Options{Builtin: []contract.Tool{{Name: "bash"}}, Deny: []string{"bash"}, Workspace: testWorkspace})
	mustLoad(t, ctrl, FromObject(ext, nil))
	hooksOnly := &v1alpha1.Extension{}
	hooksOnly.Name, hooksOnly.Namespace = "hooks-only", "team-a"
	hooksOnly.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "first-look", Event: vocab.BeforeToolCall,
		CEL: &v1alpha1.CELHook{Expression: "call.name != 'forbidden'"}}}
	mustLoad(t, ctrl, FromObject(hooksOnly, nil))
	published := ctrl.Registry()

	agent, outcomes := exthost.NewHostFromRegistry(context.Background(), published, testWorkspace, nil)
	for _, o := range outcomes {
		if o.State != vocab.ExtensionLoaded {
			t.Fatalf("outcome %+v", o)
		}
	}
	if got := agent.Registry(); !reflect.DeepEqual(got, published) {
		t.Fatalf("registry round trip\n got %+v\nwant %+v", got, published)
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
	agent, _ = exthost.NewHostFromRegistry(context.Background(), published, testWorkspace, nil)
	if got := agent.Extensions(); len(got) != 2 || got[0] != "review-extension" {
		t.Fatalf("order without extensions list: %v", got)
	}
}
