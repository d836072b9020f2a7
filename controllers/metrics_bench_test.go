package controllers

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// BenchmarkObserveReconcile is the metrics bookkeeping of one reconcile with
// n Workspaces known to the manager; a change over n Workspaces pays it n
// times per pass, so any cost growing with n makes a change quadratic
// (docs/benchmarks.md, "With the brakes off").
func BenchmarkObserveReconcile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("workspaces=%d", n), func(b *testing.B) {
			fleet := make([]*v1alpha1.Workspace, n)
			for i := range fleet {
				fleet[i] = workspaceWithExtensions("metrics-bench", fmt.Sprintf("ws-%05d", i), vocab.ExtensionLoaded, vocab.ExtensionRejected)
				observeReconcile(fleet[i], nil, false)
			}
			b.Cleanup(func() {
				for _, ws := range fleet {
					forgetWorkspaceMetrics(types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name})
				}
			})
			i := 0
			for b.Loop() {
				observeReconcile(fleet[i%n], nil, false)
				i++
			}
		})
	}
}
