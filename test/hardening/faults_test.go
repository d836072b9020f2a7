package hardening

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// The fault tests are sequential: they stop the API server or the manager,
// which the parallel tests must not see. Go runs every sequential top-level
// test before it resumes the parallel ones.

// burst edits the skill's body n times, ignoring failures (the API server
// may be down), and returns once done.
func burst(ns, name string, n int, pause time.Duration) {
	ctx := context.Background()
	for i := range n {
		s := &v1alpha1.Skill{}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err == nil {
			s.Spec.Body = fmt.Sprintf("BURST EDIT %d", i)
			_ = k8sClient.Update(ctx, s)
		}
		time.Sleep(pause)
	}
}

// activeWorkers is controller-runtime's gauge of reconciles in progress.
func activeWorkers(controller string) float64 {
	return testenv.ControllerMetric("controller_runtime_active_workers", "controller", controller)
}

// activatedNotes is a Workspace whose context carries the notes skill's body.
func activatedNotes(ns string) *v1alpha1.Workspace {
	ws := devWorkspace(ns)
	ws.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "notes"}}
	return ws
}

// TestFault_APIServerRestartDuringBurstConverges stops the API server (etcd
// keeps running) in the middle of a burst of edits and starts it again: the
// manager converges on the last edit, and no reconcile stays stuck (the
// reconciler's timeout ends passes blocked on the dead server).
func TestFault_APIServerRestartDuringBurstConverges(t *testing.T) {
	mgrMu.Lock()
	defer mgrMu.Unlock()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "FIRST BODY"))
	kit.Create(t, activatedNotes(ns))
	kit.Published(t, ns, "dev", "FIRST BODY")

	var wg sync.WaitGroup
	wg.Go(func() { burst(ns, "notes", 40, 100*time.Millisecond) })
	time.Sleep(time.Second)
	apiServer := env.ControlPlane.GetAPIServer()
	if err := apiServer.Stop(); err != nil {
		t.Logf("API server did not stop gracefully and was killed: %v", err)
	}
	time.Sleep(3 * time.Second) // edits and reconciles fail meanwhile
	if err := apiServer.Start(); err != nil {
		t.Fatalf("starting the API server again: %v", err)
	}
	wg.Wait()
	testenv.Update(t, kit, testenv.Skill(ns, "notes", "", ""), func(s *v1alpha1.Skill) { s.Spec.Body = "FINAL BODY" })
	kit.Published(t, ns, "dev", "FINAL BODY")
	kit.Eventually(t, func() error {
		if n := activeWorkers("workspace"); n != 0 {
			return fmt.Errorf("%v Workspace reconciles still running", n)
		}
		return nil
	})
}

// TestFault_TransientReadFailureIsRetriedNotReported is the regression test
// for a bug: a failed live read of an instructions ConfigMap used to become
// Ready=False/InvalidResource with no retry, so the Workspace stayed broken
// until something else changed. Now it is retried with backoff.
func TestFault_TransientReadFailureIsRetriedNotReported(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	rules := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rules"}, Data: map[string]string{"AGENTS.md": "RULES V1"}}
	kit.Create(t, rules)
	ws := devWorkspace(ns)
	ws.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "rules", Key: "AGENTS.md"}}}
	kit.Create(t, ws)
	kit.Published(t, ns, "dev", "RULES V1")

	// One change, one reconcile: its live read fails twice. Only a retry
	// can publish V2; nothing else will trigger another pass.
	faults.inject(ns, 2)
	testenv.Update(t, kit, rules, func(c *corev1.ConfigMap) { c.Data["AGENTS.md"] = "RULES V2" })
	kit.Eventually(t, func() error {
		_, cm := kit.Published(t, ns, "dev")
		if !strings.Contains(cm.Data[contract.KeySystemPrompt], "RULES V2") {
			return fmt.Errorf("instructions change not published yet")
		}
		return nil
	})
	if faults.take(ns) {
		t.Error("the injected failures were not all consumed")
	}
}

// TestFault_CompetingWritersDuringBurstConverge edits a skill in a burst
// while a competitor rewrites a data key of the published ConfigMap (an
// Update with optimistic locking, as kubectl edit does) and relabels the
// Workspace. Our server-side applies carry no resourceVersion, so they never
// conflict; the competitor's conflicts are its own. Afterwards the context
// is ours again and consistent.
func TestFault_CompetingWritersDuringBurstConverge(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "FIRST BODY"))
	kit.Create(t, activatedNotes(ns))
	kit.Published(t, ns, "dev", "FIRST BODY")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var conflicts, competitorWrites int
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cm := &corev1.ConfigMap{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "dev-context"}, cm); err == nil {
				cm.Data[contract.KeySystemPrompt] = fmt.Sprintf("COMPETITOR %d", i)
				switch err := k8sClient.Update(ctx, cm, client.FieldOwner("kubectl-edit")); {
				case apierrors.IsConflict(err):
					conflicts++
				case err == nil:
					competitorWrites++
				}
			}
			w := &v1alpha1.Workspace{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "dev"}, w); err == nil {
				if w.Labels == nil {
					w.Labels = map[string]string{}
				}
				w.Labels["competitor"] = fmt.Sprint(i)
				_ = k8sClient.Update(ctx, w, client.FieldOwner("kubectl-edit"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	burst(ns, "notes", 30, 100*time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("competitor: %d writes, %d conflicts", competitorWrites, conflicts)
	if competitorWrites == 0 {
		t.Fatal("the competitor never wrote: the test proves nothing")
	}
	testenv.Update(t, kit, testenv.Skill(ns, "notes", "", ""), func(s *v1alpha1.Skill) { s.Spec.Body = "FINAL BODY" })
	ws, _ := kit.Published(t, ns, "dev", "FINAL BODY")
	cm := kit.ConfigMap(t, ns, "dev-context")
	testenv.MustNotContain(t, "system-prompt.md", cm.Data[contract.KeySystemPrompt], "COMPETITOR")
	if err := testenv.Consistent(ws, cm); err != nil {
		t.Error(err)
	}
}

// TestFault_WorkspaceDeletedAndRecreatedRepublishes deletes a published
// Workspace and re-creates it under the same name at once: the new object
// (new UID) gets its own status and a ConfigMap it controls. envtest runs no
// garbage collector, so the test deletes every ConfigMap of the old Workspace
// as the collector would (its owner is gone).
func TestFault_WorkspaceDeletedAndRecreatedRepublishes(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES BODY"))
	kit.Create(t, activatedNotes(ns))
	old, _ := kit.Published(t, ns, "dev", "NOTES BODY")
	for range 3 {
		if err := k8sClient.Delete(ctx, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}}); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}}); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		kit.Eventually(t, func() error {
			return client.IgnoreAlreadyExists(k8sClient.Create(ctx, activatedNotes(ns)))
		})
		// A reconcile that still saw the old Workspace in its cache may have
		// published for it again; the collector deletes such a ConfigMap
		// (its owner is gone), and so does this loop.
		kit.Eventually(t, func() error {
			ws := &v1alpha1.Workspace{}
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dev"}, ws); err != nil {
				return err
			}
			cm, err := kit.GetConfigMap(ns, "dev-context")
			if err != nil {
				return err
			}
			if ref := metav1.GetControllerOf(cm); ref != nil && ref.UID != ws.UID {
				_ = k8sClient.Delete(ctx, cm)
				return fmt.Errorf("collected ConfigMap of the deleted Workspace %s", ref.UID)
			}
			return testenv.Consistent(ws, cm)
		})
		ws, cm := kit.Published(t, ns, "dev")
		if ws.UID == old.UID {
			t.Fatal("the Workspace was not re-created")
		}
		if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != ws.UID {
			t.Errorf("ConfigMap controller = %+v, want the new Workspace %s", ref, ws.UID)
		}
		old = ws
	}
}

// TestFault_RecreatedWorkspaceIsWrittenEvenIfItsDeletionWasNeverSeen is the
// regression test for a bug: the reconciler remembered the last status it
// patched per namespace/name, so a Workspace re-created under the same name
// before the reconciler saw the deletion computed "the same" status and was
// never written (its status stayed empty). It drives one reconciler by hand,
// with the manager stopped, so the deletion is deterministically unseen.
func TestFault_RecreatedWorkspaceIsWrittenEvenIfItsDeletionWasNeverSeen(t *testing.T) {
	ctx := context.Background()
	mgrMu.Lock()
	defer mgrMu.Unlock()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES BODY"))
	if err := current.Stop(); err != nil {
		t.Fatal(err)
	}
	defer restartManager(t)

	r := handReconciler(k8sClient, workspace.Policy{PlatformNamespaces: []string{platformNS}, DefaultTrust: vocab.TrustRestricted})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "dev"}}
	kit.Create(t, activatedNotes(ns))
	first := reconcileUntilSettled(t, r, req)
	if err := testenv.Ready(first); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}}); err != nil {
		t.Fatal(err)
	}
	kit.Create(t, activatedNotes(ns))
	second := reconcileUntilSettled(t, r, req)
	if second.UID == first.UID {
		t.Fatal("not re-created")
	}
	if err := testenv.Ready(second); err != nil {
		t.Fatalf("re-created Workspace: %v (status %+v)", err, second.Status)
	}
	if second.Status.Context == nil || second.Status.Context.Hash != first.Status.Context.Hash {
		t.Errorf("re-created Workspace status.context = %+v, want hash %s", second.Status.Context, first.Status.Context.Hash)
	}
	if ref := metav1.GetControllerOf(kit.ConfigMap(t, ns, "dev-context")); ref == nil || ref.UID != second.UID {
		t.Errorf("ConfigMap controller = %+v, want %s", ref, second.UID)
	}
}

func restartManager(t *testing.T) {
	t.Helper()
	var err error
	if current, err = startManager(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
}

// TestFault_ManagerRestartMidwayConverges stops the manager, changes one
// Workspace's input, deletes another's ConfigMap and leaves a third alone,
// then starts a new manager. It converges; the untouched Workspace costs no
// write at all: the new manager adopts its current ConfigMap (hash, signing
// keys, controller, field owner) instead of applying it again; then steady
// state writes nothing.
func TestFault_ManagerRestartMidwayConverges(t *testing.T) {
	ctx := context.Background()
	mgrMu.Lock()
	defer mgrMu.Unlock()
	changed, deleted, untouched := kit.NewNamespace(t, vocab.TrustRestricted), kit.NewNamespace(t, vocab.TrustRestricted), kit.NewNamespace(t, vocab.TrustRestricted)
	for _, ns := range []string{changed, deleted, untouched} {
		kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "FIRST BODY"))
		kit.Create(t, activatedNotes(ns))
	}
	_, untouchedCM := kit.Published(t, untouched, "dev", "FIRST BODY")
	kit.Published(t, deleted, "dev", "FIRST BODY")
	kit.Published(t, changed, "dev", "FIRST BODY")

	if err := current.Stop(); err != nil {
		t.Fatal(err)
	}
	testenv.Update(t, kit, testenv.Skill(changed, "notes", "", ""), func(s *v1alpha1.Skill) { s.Spec.Body = "CHANGED WHILE DOWN" })
	if err := k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: deleted, Name: "dev-context"}}); err != nil {
		t.Fatal(err)
	}
	// A ConfigMap write is a create (POST …/configmaps) or an apply (PATCH …/configmaps/dev-context).
	cmPath := func(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" }
	statusPath := func(ns string) string {
		return "/apis/loadout.dev/v1alpha1/namespaces/" + ns + "/workspaces/dev/status"
	}
	before := map[string]int{}
	for _, ns := range []string{changed, deleted, untouched} {
		before[cmPath(ns)] = writes.Total(cmPath(ns))
		before[statusPath(ns)] = writes.Total(statusPath(ns))
	}
	adopted := adoptions()
	restartManager(t)

	kit.Published(t, changed, "dev", "CHANGED WHILE DOWN")
	kit.Published(t, deleted, "dev")
	kit.Eventually(t, func() error {
		if adoptions() == adopted && writes.Total(cmPath(untouched)) == before[cmPath(untouched)] {
			return fmt.Errorf("the new manager has not reconciled the untouched Workspace yet")
		}
		return nil
	})
	time.Sleep(3 * time.Second) // let reconciles caused by our own writes settle
	counts := map[string]int{}
	for _, ns := range []string{changed, deleted, untouched} {
		counts["changed/deleted/untouched "+ns+" configmap"] = writes.Total(cmPath(ns)) - before[cmPath(ns)]
		counts["changed/deleted/untouched "+ns+" status"] = writes.Total(statusPath(ns)) - before[statusPath(ns)]
	}
	t.Logf("writes after restart: %v", counts)
	// A new manager has no record of its predecessor's writes: it adopts
	// the current ConfigMap without writing it (docs/operations.md, Shards).
	if d := writes.Total(cmPath(untouched)) - before[cmPath(untouched)]; d != 0 {
		t.Errorf("untouched Workspace: %d ConfigMap writes after restart, want 0 (adopted)", d)
	}
	if d := writes.Total(statusPath(untouched)) - before[statusPath(untouched)]; d != 0 {
		t.Errorf("untouched Workspace: %d status patches after restart, want 0", d)
	}
	// Its content is untouched.
	if cm := kit.ConfigMap(t, untouched, "dev-context"); !maps.Equal(cm.Data, untouchedCM.Data) ||
		!maps.Equal(cm.Labels, untouchedCM.Labels) || !maps.Equal(cm.Annotations, untouchedCM.Annotations) ||
		!slices.EqualFunc(cm.OwnerReferences, untouchedCM.OwnerReferences, func(a, b metav1.OwnerReference) bool { return a.UID == b.UID && *a.Controller == *b.Controller }) {
		t.Errorf("untouched ConfigMap's content changed: %+v → %+v", untouchedCM.ObjectMeta, cm.ObjectMeta)
	}
	for _, ns := range []string{changed, deleted} {
		if d := writes.Total(cmPath(ns)) - before[cmPath(ns)]; d != 1 {
			t.Errorf("%s: %d ConfigMap writes after restart, want 1", ns, d)
		}
	}
	settled := writes.Total("/namespaces/")
	time.Sleep(3 * time.Second)
	if d := writes.Total("/namespaces/") - settled; d != 0 {
		t.Errorf("steady state after restart wrote %d times", d)
	}
}

// adoptions is loadout_configmap_adoptions_total of the manager in this
// process.
func adoptions() float64 { return testenv.Metric("loadout_configmap_adoptions_total") }
