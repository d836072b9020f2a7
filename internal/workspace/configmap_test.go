package workspace

import (
	"context"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/resources"
)

// publishFor runs gather, load and publish for ws over objs.
func publishFor(t *testing.T, ws *v1alpha1.Workspace, objs Objects) *resources.Result {
	t.Helper()
	plan := mustGather(t, ws, objs)
	plan.Input.Registry, _ = HostLoader{}.LoadExtensions(context.Background(), plan.Input.Workspace, plan)
	res, err := resources.Render(plan.Input)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The context depends on the inputs only: a Workspace at generation 7 in a
// cluster and the same Workspace read from a manifest (generation 0) publish
// the same bytes and hash, so `loadout preview` predicts the cluster exactly.
func TestContext_SameInputsSameHashWhateverTheGeneration(t *testing.T) {
	objs := &fakeObjects{skills: []v1alpha1.Skill{sk("team", "notes"), sk("loadout-system", "rules")}}
	manifest := workspaceIn("team")
	live := manifest.DeepCopy()
	live.Generation, live.UID = 7, "uid-1"
	a, b := publishFor(t, manifest, objs), publishFor(t, live, objs)
	if a.Hash != b.Hash || !maps.Equal(a.Data, b.Data) {
		t.Errorf("generation 0 published %s, generation 7 published %s: the context must not depend on the generation", a.Hash, b.Hash)
	}
}

func TestContextConfigMap_OwnerOnlyForALiveWorkspaceAndNoCopiedMetadata(t *testing.T) {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev",
		Labels: map[string]string{"app.kubernetes.io/instance": "argo"}, Annotations: map[string]string{"note": "x"}}}
	res := &resources.Result{Hash: "sha256:00", Data: map[string]string{"k": "v"}}
	cm := ContextConfigMap(ws, res)
	if *cm.Name != "dev-context" || *cm.Namespace != "team" || len(cm.OwnerReferences) != 0 {
		t.Errorf("manifest Workspace: got %s/%s with %d owner references, want team/dev-context and none", *cm.Namespace, *cm.Name, len(cm.OwnerReferences))
	}
	if want := map[string]string{vocab.WorkspaceLabel: "dev"}; !maps.Equal(cm.Labels, want) {
		t.Errorf("labels %v, want only %v", cm.Labels, want)
	}
	if want := map[string]string{vocab.ContextHashAnnotation: "sha256:00"}; !maps.Equal(cm.Annotations, want) {
		t.Errorf("annotations %v, want only %v", cm.Annotations, want)
	}
	ws.UID = "uid-1"
	ref := ContextConfigMap(ws, res).OwnerReferences
	if len(ref) != 1 || *ref[0].UID != "uid-1" || *ref[0].Kind != v1alpha1.WorkspaceKind || !*ref[0].Controller {
		t.Errorf("live Workspace: owner references %+v, want the Workspace as controller", ref)
	}
}
