package extobject

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

func TestFromObject_OutcomeKeyRejectedNamingHookAndKey_RLC4(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks = append(ext.Spec.Hooks, v1alpha1.ExtensionHook{
		Name: "redact", Event: vocab.UserInput,
		CEL: &v1alpha1.CELHook{Expression: "{'arguments': {'text': 'x'}}"},
	})
	out := newTestHost().Load(context.Background(), FromObject(ext, nil), true)
	if out.State != vocab.ExtensionRejected || out.Reason != exthost.ReasonInvalid {
		t.Fatalf("outcome %+v", out)
	}
	for _, want := range []string{"spec.hooks[2].cel.expression", `hook "redact"`, `"arguments"`, "UserInput"} {
		if !strings.Contains(out.Message, want) {
			t.Errorf("message %q does not name %s", out.Message, want)
		}
	}
	ext.Spec.Hooks[2].CEL.Expression = "true"
	ext.Spec.Hooks[2].Match = &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"bash"}}
	if errs := ValidateObject(ext); len(errs) == 0 || !strings.Contains(errs[0].Error(), "match applies to tool events only") {
		t.Fatalf("match on UserInput: %v", errs)
	}
}
