package controllers

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func workspaceWithExtensions(ns, name string, states ...vocab.ExtensionLoadState) *v1alpha1.Workspace {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, s := range states {
		ws.Status.Extensions = append(ws.Status.Extensions, v1alpha1.ExtensionState{State: s})
	}
	return ws
}

// A scraper of the manager's metrics must not learn which Workspaces exist
// unless the operator asked for per-Workspace series (--metrics-per-workspace).
func TestMetrics_NoWorkspaceNamesInLabelsUnlessPerWorkspaceIsOn(t *testing.T) {
	const ns = "metrics-test-tenant"
	hidden := workspaceWithExtensions(ns, "hidden", vocab.ExtensionLoaded, vocab.ExtensionRejected)
	shown := workspaceWithExtensions(ns, "shown", vocab.ExtensionLoaded)
	t.Cleanup(func() {
		forgetWorkspaceMetrics(types.NamespacedName{Namespace: ns, Name: "hidden"})
		forgetWorkspaceMetrics(types.NamespacedName{Namespace: ns, Name: "shown"})
	})
	loadedBefore := testenv.ControllerMetric("loadout_extensions", "state", "Loaded")

	observeReconcile(hidden, nil, false)
	if got := testenv.ControllerMetric("loadout_workspace_extensions", "workspace", "hidden"); got != 0 {
		t.Errorf("with per-Workspace metrics off, loadout_workspace_extensions{workspace=hidden} = %v, want no series", got)
	}
	if got := testenv.ControllerMetric("loadout_workspace_extensions", "namespace", ns); got != 0 {
		t.Errorf("with per-Workspace metrics off, a series names namespace %s", ns)
	}
	if got := testenv.ControllerMetric("loadout_extensions", "state", "Loaded") - loadedBefore; got != 1 {
		t.Errorf("loadout_extensions{state=Loaded} grew by %v, want 1 (the total still counts every Workspace)", got)
	}

	observeReconcile(shown, errors.New("retried"), true)
	if got := testenv.ControllerMetric("loadout_workspace_extensions", "workspace", "shown"); got != 1 {
		t.Errorf("with per-Workspace metrics on, loadout_workspace_extensions{workspace=shown} = %v, want 1", got)
	}
	if got := testenv.ControllerMetric("loadout_extensions", "state", "Loaded") - loadedBefore; got != 2 {
		t.Errorf("loadout_extensions{state=Loaded} grew by %v, want 2", got)
	}

	forgetWorkspaceMetrics(types.NamespacedName{Namespace: ns, Name: "hidden"})
	if got := testenv.ControllerMetric("loadout_extensions", "state", "Rejected"); got < 0 {
		t.Fatal("cannot read the registry")
	}
	if got := testenv.ControllerMetric("loadout_extensions", "state", "Loaded") - loadedBefore; got != 1 {
		t.Errorf("after the Workspace is deleted, loadout_extensions{state=Loaded} grew by %v, want 1", got)
	}
}

// loadout_extensions is kept as a running sum (set does not re-add every
// Workspace's counts on each reconcile): a Workspace reconciled again
// replaces its counts rather than adding them twice, a state it no longer
// has drops out of the total, and a deleted Workspace leaves it.
func TestMetrics_ExtensionTotalsFollowEachWorkspacesLatestCounts(t *testing.T) {
	const ns = "metrics-test-totals"
	key := types.NamespacedName{Namespace: ns, Name: "ws"}
	t.Cleanup(func() { forgetWorkspaceMetrics(key) })
	total := func(s vocab.ExtensionLoadState) float64 {
		return testenv.ControllerMetric("loadout_extensions", "state", string(s))
	}
	loaded, rejected := total(vocab.ExtensionLoaded), total(vocab.ExtensionRejected)
	check := func(step string, wantLoaded, wantRejected float64) {
		t.Helper()
		if got := total(vocab.ExtensionLoaded) - loaded; got != wantLoaded {
			t.Errorf("%s: loadout_extensions{state=Loaded} grew by %v, want %v", step, got, wantLoaded)
		}
		if got := total(vocab.ExtensionRejected) - rejected; got != wantRejected {
			t.Errorf("%s: loadout_extensions{state=Rejected} grew by %v, want %v", step, got, wantRejected)
		}
	}

	observeReconcile(workspaceWithExtensions(ns, "ws", vocab.ExtensionLoaded, vocab.ExtensionLoaded, vocab.ExtensionRejected), nil, false)
	check("first reconcile", 2, 1)
	observeReconcile(workspaceWithExtensions(ns, "ws", vocab.ExtensionLoaded, vocab.ExtensionLoaded, vocab.ExtensionRejected), nil, false)
	check("same counts again", 2, 1)
	observeReconcile(workspaceWithExtensions(ns, "ws", vocab.ExtensionLoaded, vocab.ExtensionLoaded, vocab.ExtensionLoaded), nil, false)
	check("rejected one now loads", 3, 0)
	observeReconcile(workspaceWithExtensions(ns, "ws", vocab.ExtensionLoadState("Unknown")), nil, false)
	check("only a state the metric does not export", 0, 0)
	observeReconcile(workspaceWithExtensions(ns, "ws", vocab.ExtensionRejected), nil, false)
	forgetWorkspaceMetrics(key)
	check("deleted", 0, 0)
}
