package extobject

import (
	"context"
	"fmt"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

func BenchmarkLoadObject(b *testing.B) {
	ext := &v1alpha1.Extension{}
	ext.Name, ext.Namespace = "policy", "loadout-system"
	ext.Spec.Tools = []v1alpha1.ExtensionTool{{Name: "review_note", Description: "Adds a review note."}}
	for i, expr := range []string{
		"!has(call.arguments.text) || !call.arguments.text.contains('SECRET')",
		"call.name != 'bash' || !call.arguments.command.startsWith('rm ')",
		"workspace.namespace.startsWith('team-')",
		"call.arguments.all(k, size(k) < 64)",
		"!('force' in call.arguments)",
	} {
		ext.Spec.Hooks = append(ext.Spec.Hooks, v1alpha1.ExtensionHook{
			Name: fmt.Sprintf("rule-%d", i), Event: vocab.BeforeToolCall, TimeoutSeconds: 10,
			CEL: &v1alpha1.CELHook{Expression: expr, Message: "denied"},
		})
	}
	load := func(b *testing.B, edit func(i int)) {
		b.Helper()
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			edit(i)
			i++
			if out := newTestHost("bash").Load(ctx, FromObject(ext, nil), true); out.State != vocab.ExtensionLoaded {
				b.Fatalf("%s: %s", out.Reason, out.Message)
			}
		}
	}
	b.Run("memoised", func(b *testing.B) { load(b, func(int) {}) })
	// A new expression each time is compiled in full: the cost before
	// memoisation, and what a change to an extension costs once.
	base := ext.Spec.Hooks[0].CEL.Expression
	b.Run("compiling", func(b *testing.B) {
		load(b, func(i int) {
			for j := range ext.Spec.Hooks {
				ext.Spec.Hooks[j].CEL.Expression = fmt.Sprintf("(%s) || %d == -1", base, i*len(ext.Spec.Hooks)+j)
			}
		})
	})
}
