package controllers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestWorkspace_SteadyStateMakesNoWrites: once published, a Workspace whose
// inputs do not change causes no request that writes, and a change to an
// input causes one ConfigMap apply and at most one status patch.
func TestWorkspace_SteadyStateMakesNoWrites(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES V1"))
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.WaitFor(t, ns, "dev", testenv.Winning("skill", "notes"))
	time.Sleep(2 * time.Second) // let the reconciles triggered by our own writes settle
	before := writes.Matching("/namespaces/" + ns + "/")

	// Unrelated activity elsewhere must not touch this Workspace.
	other := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(other, "elsewhere", "Elsewhere.", "ELSEWHERE"))
	time.Sleep(3 * time.Second)
	if after := writes.Matching("/namespaces/" + ns + "/"); !mapsEqual(before, after) {
		t.Errorf("steady state wrote: before %v, after %v", before, after)
	}

	// One change: one ConfigMap apply, at most one status patch.
	s := testenv.Skill(ns, "notes", "", "")
	testenv.Update(t, kit, s, func(s *v1alpha1.Skill) { s.Spec.Description = "Notes, revised." })
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		if n := writes.Matching("PATCH", "/namespaces/"+ns+"/configmaps/dev-context"); n["PATCH /api/v1/namespaces/"+ns+"/configmaps/dev-context"] < before["PATCH /api/v1/namespaces/"+ns+"/configmaps/dev-context"]+1 {
			return errString("change not applied yet")
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	after := writes.Matching("/namespaces/" + ns + "/")
	cmKey := "PATCH /api/v1/namespaces/" + ns + "/configmaps/dev-context"
	statusKey := "PATCH /apis/loadout.dev/v1alpha1/namespaces/" + ns + "/workspaces/dev/status"
	if d := after[cmKey] - before[cmKey]; d != 1 {
		t.Errorf("ConfigMap applies for one change = %d, want 1", d)
	}
	if d := after[statusKey] - before[statusKey]; d > 1 {
		t.Errorf("status patches for one change = %d, want at most 1", d)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWorkspace_IndexesMapInputsToExactlyTheDependentWorkspaces: a change to
// a Skill reaches the Workspaces whose roots read it, and no others.
func TestWorkspace_IndexesMapInputsToExactlyTheDependentWorkspaces(t *testing.T) {
	ctx := context.Background()
	a := kit.NewNamespace(t, vocab.TrustRestricted)
	b := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, workspaceWithRoots(a, "reads-a", platformOtherNS))
	selective := workspaceWithRoots(a, "team-only", platformOtherNS)
	selective.Spec.Roots[0].Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
	kit.Create(t, selective)
	kit.Create(t, workspaceWithRoots(b, "reads-b", platformOtherNS))
	kit.WaitFor(t, a, "reads-a", testenv.Ready)
	kit.WaitFor(t, a, "team-only", testenv.Ready)
	kit.WaitFor(t, b, "reads-b", testenv.Ready)

	names := func(reqs []reconcile.Request) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, r.String())
		}
		slices.Sort(out)
		return out
	}
	unlabelled := testenv.Skill(a, "s", "S.", "S")
	if got, want := names(reconciler.workspacesForResource(ctx, unlabelled)), []string{a + "/reads-a"}; !slices.Equal(got, want) {
		t.Errorf("unlabelled skill in %s maps to %v, want %v", a, got, want)
	}
	labelled := testenv.Skill(a, "s", "S.", "S")
	labelled.Labels = map[string]string{"team": "x"}
	if got, want := names(reconciler.workspacesForResource(ctx, labelled)), []string{a + "/reads-a", a + "/team-only"}; !slices.Equal(got, want) {
		t.Errorf("labelled skill in %s maps to %v, want %v", a, got, want)
	}
	inPlatform := testenv.Skill(platformOtherNS, "p", "P.", "P")
	got := names(reconciler.workspacesForResource(ctx, inPlatform))
	for _, want := range []string{a + "/reads-a", a + "/team-only", b + "/reads-b"} {
		if !slices.Contains(got, want) {
			t.Errorf("platform skill maps to %v, missing %s", got, want)
		}
	}
}

// TestWorkspace_ServiceBackedExtensionContactedOnlyWhenTrusted is R-EXT-1 in
// the controller: the Service of an untrusted extension receives no request.
func TestWorkspace_ServiceBackedExtensionContactedOnlyWhenTrusted(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"tools":[{"name":"remote_tool","description":"A tool served by a Service."}]}`))
	}))
	t.Cleanup(srv.Close)

	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	services.Store(ns+"/ext-manifest", srv.URL)
	kit.Create(t, &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
		Spec: v1alpha1.ExtensionSpec{Source: &v1alpha1.ExtensionSource{Service: v1alpha1.ServiceReference{Name: "ext-manifest", Port: 80, Path: "/manifest"}}}})
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		return stateIs(ws, ns+"/remote", vocab.ExtensionSkippedUntrusted)
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("untrusted extension's Service received %d requests", n)
	}
	testenv.Update(t, kit, namespaceObject(ns), func(n *namespaceT) { n.Labels[vocab.TrustLabel] = string(vocab.TrustTrusted) })
	got := kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		return stateIs(ws, ns+"/remote", vocab.ExtensionLoaded)
	})
	if hits.Load() == 0 {
		t.Error("trusted extension's manifest was not fetched")
	}
	if len(got.Status.Tools) != 1 || got.Status.Tools[0].Name != "remote_tool" {
		t.Errorf("tools = %+v, want remote_tool", got.Status.Tools)
	}
}
