package exthost

import (
	"context"
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
