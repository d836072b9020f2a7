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
