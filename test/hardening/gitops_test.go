package hardening

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// gitopsWindow is how long writes are counted while another field manager
// keeps touching our ConfigMap. The issue asks for 60 s; the test runs in
// parallel with the bad-input catalog, so the window overlaps it instead of
// adding to `make test`. Nothing here depends on the length: the assertion
// is a count, bounded by the competitor's own writes.
const gitopsWindow = 60 * time.Second

// gitopsTracking are the labels and annotations Argo CD and Flux track
// objects by: a child carrying a copy would be pruned or adopted by them.
var gitopsTracking = map[string]string{
	"app.kubernetes.io/instance":                       "argo-app",
	"app.kubernetes.io/managed-by":                     "Helm",
	"argocd.argoproj.io/instance":                      "argo-app",
	"kustomize.toolkit.fluxcd.io/name":                 "apps",
	"kustomize.toolkit.fluxcd.io/namespace":            "flux-system",
	"helm.toolkit.fluxcd.io/name":                      "loadout",
	"argocd.argoproj.io/tracking-id":                   "argo-app:loadout.dev/Workspace:ns/dev",
	"argocd.argoproj.io/sync-options":                  "Prune=false",
	"kustomize.toolkit.fluxcd.io/reconcile":            "disabled",
	"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"Workspace"}`,
}

// TestGitOps_PublishedConfigMapCarriesNoTrackingMetadata: a Workspace managed
// by Argo CD or Flux carries their tracking labels and annotations; its
// ConfigMap carries only Loadout's own.
func TestGitOps_PublishedConfigMapCarriesNoTrackingMetadata(t *testing.T) {
	t.Parallel()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	ws := devWorkspace(ns)
	ws.Labels, ws.Annotations = map[string]string{}, map[string]string{}
	for k, v := range gitopsTracking {
		if strings.Contains(k, "tracking-id") || strings.Contains(k, "sync-options") || strings.Contains(k, "reconcile") || strings.Contains(k, "last-applied") {
			ws.Annotations[k] = v
		} else {
			ws.Labels[k] = v
		}
	}
	kit.Create(t, ws)
	_, cm := kit.Published(t, ns, "dev")
	for k := range cm.Labels {
		if k != vocab.WorkspaceLabel {
			t.Errorf("ConfigMap carries label %s", k)
		}
	}
	for k := range cm.Annotations {
		if k != vocab.ContextHashAnnotation && k != vocab.ContextSignersAnnotation {
			t.Errorf("ConfigMap carries annotation %s", k)
		}
	}
}

// TestGitOps_CompetingFieldManagerStartsNoWriteLoop: for gitopsWindow, one
// field manager keeps server-side applying its own label onto our ConfigMap
// (as a GitOps tool might) and another rewrites a data key with an update
// (as kubectl edit does) every few seconds. Our writes are counted: each
// foreign data edit costs at most one re-apply, a foreign label costs at
// most one no-op apply, and the label survives (we never fight over fields
// we do not own).
func TestGitOps_CompetingFieldManagerStartsNoWriteLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, good, _ := publishedNotes(t, vocab.TrustRestricted)
	cmPath := "/api/v1/namespaces/" + ns + "/configmaps/dev-context"
	statusPath := "/apis/loadout.dev/v1alpha1/namespaces/" + ns + "/workspaces/dev/status"
	cmBefore, statusBefore := writes.Total(cmPath), writes.Total(statusPath)

	var labelApplies, dataEdits int
	var wg sync.WaitGroup
	deadline := time.Now().Add(gitopsWindow)
	wg.Go(func() {
		for i := 0; time.Now().Before(deadline); i++ {
			ac := corev1ac.ConfigMap("dev-context", ns).WithLabels(map[string]string{"gitops.example.com/synced": "true"})
			if k8sClient.Apply(ctx, ac, client.FieldOwner("gitops-agent"), client.ForceOwnership) == nil {
				labelApplies++
			}
			if i%5 == 0 {
				cm := &corev1.ConfigMap{}
				if k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "dev-context"}, cm) == nil {
					cm.Data[contract.KeySystemPrompt] = fmt.Sprintf("EDITED BY HAND %d", i)
					if k8sClient.Update(ctx, cm, client.FieldOwner("kubectl-edit")) == nil {
						dataEdits++
					}
				}
			}
			time.Sleep(time.Second)
		}
	})
	wg.Wait()
	// The last hand edit is reverted too.
	kit.Eventually(t, func() error {
		cm := kit.ConfigMap(t, ns, "dev-context")
		if strings.Contains(cm.Data[contract.KeySystemPrompt], "EDITED BY HAND") {
			return fmt.Errorf("hand edit not reverted yet")
		}
		return testenv.Consistent(good, cm)
	})
	time.Sleep(3 * time.Second) // let the last reverts settle before counting
	cmWrites, statusWrites := writes.Total(cmPath)-cmBefore, writes.Total(statusPath)-statusBefore
	t.Logf("window %s: competitor %d label applies, %d data edits; ours %d ConfigMap applies, %d status patches",
		gitopsWindow, labelApplies, dataEdits, cmWrites, statusWrites)
	if dataEdits == 0 {
		t.Fatal("the competitor never edited: the test proves nothing")
	}
	// Bound: one re-apply per foreign data edit, plus one no-op apply for
	// the first foreign label (our last apply's resourceVersion then moves).
	if limit := dataEdits + 2; cmWrites > limit {
		t.Errorf("%d ConfigMap applies for %d foreign edits: a write loop (limit %d)", cmWrites, dataEdits, limit)
	}
	if statusWrites != 0 {
		t.Errorf("%d status patches: nothing about the Workspace changed", statusWrites)
	}
	cm := kit.ConfigMap(t, ns, "dev-context")
	if cm.Labels["gitops.example.com/synced"] != "true" {
		t.Errorf("the other manager's label was removed: %v", cm.Labels)
	}
	if ws := kit.WaitFor(t, ns, "dev", testenv.Ready); ws.Status.Context.Hash != good.Status.Context.Hash {
		t.Errorf("hash moved from %s to %s", good.Status.Context.Hash, ws.Status.Context.Hash)
	}
}
