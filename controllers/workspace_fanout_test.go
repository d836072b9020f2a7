package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestWorkspace_PlatformSkillChangeUpdatesDependentsOnly: a platform Skill
// change reaches every Workspace that reads the platform namespace, and a
// Workspace that does not read it sees no write at all.
func TestWorkspace_PlatformSkillChangeUpdatesDependentsOnly(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	shared := testenv.Skill(platformOtherNS, "shared-"+ns, "Shared v1.", "SHARED")
	shared.Spec.Name = v1alpha1.LogicalName("shared-" + ns)
	kit.Create(t, shared)
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, shared) })
	dependents := []string{"a", "b", "c"}
	for _, name := range dependents {
		kit.Create(t, workspaceWithRoots(ns, name, platformOtherNS))
	}
	kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "project-only"},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}}})
	hashes := map[string]string{}
	for _, name := range append(slices.Clone(dependents), "project-only") {
		check := testenv.Winning("skill", "shared-"+ns)
		if name == "project-only" {
			check = testenv.Ready
		}
		hashes[name] = kit.WaitFor(t, ns, name, check).Status.Context.Hash
	}
	time.Sleep(time.Second)
	isolatedBefore := writes.Matching("/namespaces/" + ns + "/configmaps/project-only-context")
	isolatedStatus := writes.Matching("/namespaces/" + ns + "/workspaces/project-only/")

	testenv.Update(t, kit, shared, func(s *v1alpha1.Skill) { s.Spec.Description = "Shared v2." })
	for _, name := range dependents {
		got := kit.WaitFor(t, ns, name, func(ws *v1alpha1.Workspace) error {
			if ws.Status.Context == nil || ws.Status.Context.Hash == hashes[name] {
				return fmt.Errorf("%s still has hash %s", name, hashes[name])
			}
			return nil
		})
		cm := kit.ConfigMap(t, ns, name+"-context")
		if cm.Annotations[vocab.ContextHashAnnotation] != got.Status.Context.Hash {
			t.Errorf("%s: ConfigMap hash %s, status %s", name, cm.Annotations[vocab.ContextHashAnnotation], got.Status.Context.Hash)
		}
		testenv.MustContain(t, name+" system-prompt.md", cm.Data[contract.KeySystemPrompt], "Shared v2.")
	}
	time.Sleep(time.Second)
	if after := writes.Matching("/namespaces/" + ns + "/configmaps/project-only-context"); !mapsEqual(isolatedBefore, after) {
		t.Errorf("independent Workspace's ConfigMap was written: %v → %v", isolatedBefore, after)
	}
	if after := writes.Matching("/namespaces/" + ns + "/workspaces/project-only/"); !mapsEqual(isolatedStatus, after) {
		t.Errorf("independent Workspace's status was written: %v → %v", isolatedStatus, after)
	}
}

// TestWorkspace_PrinterColumnsShowReadySkillsToolsAndHash is what `kubectl get
// ws -A` prints: the server-side Table of the CRD's printer columns.
func TestWorkspace_PrinterColumnsShowReadySkillsToolsAndHash(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES"))
	ws := workspaceWithRoots(ns, "dev", platformOtherNS)
	ws.Spec.Tools = &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"read", "bash"}}
	kit.Create(t, ws)
	got := kit.WaitFor(t, ns, "dev", testenv.Ready)

	rc, err := rest.RESTClientFor(tableConfig())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get().AbsPath("/apis/loadout.dev/v1alpha1/namespaces", ns, "workspaces").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if want := []string{"Name", "Ready", "Skills", "Tools", "Context hash", "Age"}; !slices.Equal(cols, want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	cells := table.Rows[0].Cells
	if cells[1] != "True" || fmt.Sprint(cells[2]) != fmt.Sprint(got.Status.Catalog.Skills) || fmt.Sprint(cells[3]) != "2" || cells[4] != got.Status.Context.Hash {
		t.Errorf("row %v, want True, %d skills, 2 tools, %s", cells, got.Status.Catalog.Skills, got.Status.Context.Hash)
	}
}
