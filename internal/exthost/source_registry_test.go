package exthost

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// hostd rebuilds the controller's hook runtime from the published registry:
// same registry, same decisions.
func TestNewHostFromRegistry_HookWithoutWireFormRejected(t *testing.T) {
	reg := contract.Registry{Hooks: []contract.Hook{{Extension: "go-only", Name: "h", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10}}}
	_, outcomes := NewHostFromRegistry(context.Background(), reg, testWorkspace, nil)
	if len(outcomes) != 1 || outcomes[0].State != vocab.ExtensionRejected || outcomes[0].Reason != ReasonInvalid {
		t.Fatalf("outcomes %+v", outcomes)
	}
}

// hostd refuses a context whose imposed (platform) webhook hook is not
// https:// with a caBundle: the agent shares hostd's name
// resolution and network, so over plain HTTP it could answer the
// platform's hook itself. The manager refuses such a spec; this holds for a
// context published before that rule. A tenant's hook keeps plain HTTP.
func TestNewHostFromRegistry_ImposedWebhookMustBeHTTPSWithACABundle(t *testing.T) {
	hook := func(imposed bool, url string, ca []byte) contract.Registry {
		return contract.Registry{Hooks: []contract.Hook{{Extension: "guard", Name: "remote", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10,
			Imposed: imposed, Webhook: &contract.WebhookHook{URL: url, CABundle: ca}}}}
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\n")
	for _, tc := range []struct {
		what   string
		reg    contract.Registry
		refuse string
	}{
		{"imposed over plain HTTP", hook(true, "http://guard.loadout-system.svc:80/check", nil), "hooks[remote].webhook.url"},
		{"imposed over HTTPS without a caBundle", hook(true, "https://guard.loadout-system.svc:443/check", nil), "hooks[remote].webhook.caBundle"},
		{"imposed over HTTPS with a caBundle", hook(true, "https://guard.loadout-system.svc:443/check", ca), ""},
		{"a tenant's over plain HTTP", hook(false, "http://guard.team-a.svc:80/check", nil), ""},
	} {
		_, outcomes := NewHostFromRegistry(context.Background(), tc.reg, testWorkspace, nil)
		if len(outcomes) != 1 {
			t.Fatalf("%s: outcomes %+v", tc.what, outcomes)
		}
		o := outcomes[0]
		switch {
		case tc.refuse == "" && o.State != vocab.ExtensionLoaded:
			t.Errorf("%s: %s %s: %s, want loaded", tc.what, o.State, o.Reason, o.Message)
		case tc.refuse != "" && (o.Reason != ReasonInvalid || !strings.Contains(o.Message, tc.refuse) || !strings.Contains(o.Message, "HTTPS with a caBundle")):
			t.Errorf("%s: %s %s: %s, want Invalid naming %s", tc.what, o.State, o.Reason, o.Message, tc.refuse)
		}
	}
}
