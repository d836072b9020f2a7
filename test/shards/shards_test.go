package shards

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// fleet creates namespaces (at least perShard in each shard of plan) with
// one Workspace each, and returns them by owning shard.
func fleet(t *testing.T, plan *shard.Plan, perShard int) map[string][]string {
	t.Helper()
	prefix := "t" + rand.String(5) + "-"
	byShard := map[string][]string{}
	for i := 0; ; i++ {
		done := true
		for _, s := range plan.Shards {
			done = done && len(byShard[s.Name]) >= perShard
		}
		if done {
			break
		}
		ns := fmt.Sprintf("%s%d", prefix, i)
		owner := plan.Owner(ns)
		if len(byShard[owner]) >= perShard {
			continue
		}
		kit.Create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{vocab.TrustLabel: string(vocab.TrustRestricted)}}})
		kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}})
		byShard[owner] = append(byShard[owner], ns)
	}
	return byShard
}

func start(t *testing.T, o Options) *Manager {
	t.Helper()
	if o.LeaseDuration == 0 {
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 4*time.Second, 3*time.Second, 250*time.Millisecond
	}
	m, err := Start(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	return m
}

// contextWrites counts a manager's ConfigMap writes and Workspace status
// patches in namespace ns ("" for all).
func contextWrites(m *Manager, ns string) int {
	frag := "/namespaces/" + ns + "/"
	if ns == "" {
		frag = "/namespaces/"
	}
	return m.Writes.Total(frag, "/configmaps") + m.Writes.Total(frag, "/workspaces/")
}

func publishedAll(t *testing.T, namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		kit.Published(t, ns, "dev")
	}
}

// Every Workspace is published by the shard that owns its namespace and by
// no other: each process writes only in its own namespaces, and its client
// refuses a write anywhere else before sending it.
func TestShards_OwnershipIsCheckedBeforeEveryWrite(t *testing.T) {
	plan := shard.EvenPlan(3)
	byShard := fleet(t, plan, 2)
	var ms []*Manager
	for _, s := range plan.Shards {
		ms = append(ms, start(t, Options{Plan: plan, Shard: s.Name, Mode: shard.ModeAuto}))
	}
	for _, nss := range byShard {
		publishedAll(t, nss...)
	}
	for i, m := range ms {
		// Kubernetes v1.37 shards built-in resources only: ConfigMaps
		// server-side, the custom resources client-side.
		if got := fmt.Sprint(m.Owner.SelectorKinds()); got != "[ConfigMap]" {
			t.Errorf("shard %d: server-side sharded kinds %s, want [ConfigMap]", i, got)
		}
		for owner, nss := range byShard {
			for _, ns := range nss {
				n := contextWrites(m, ns)
				if owner == m.Owner.Shard.Name && n == 0 {
					t.Errorf("shard %s wrote nothing in its namespace %s", m.Owner.Shard.Name, ns)
				}
				if owner != m.Owner.Shard.Name && n != 0 {
					t.Errorf("shard %s wrote %d times in %s, which shard %s owns: %v", m.Owner.Shard.Name, n, ns, owner, m.Writes.Matching("/namespaces/"+ns+"/"))
				}
			}
		}
		// Its cache holds only its own Workspaces.
		var list v1alpha1.WorkspaceList
		if err := m.Client.List(context.Background(), &list); err != nil {
			t.Fatal(err)
		}
		for _, ws := range list.Items {
			if !m.Owner.Owns(ws.Namespace) {
				t.Errorf("shard %s caches Workspace %s/%s of shard %s", m.Owner.Shard.Name, ws.Namespace, ws.Name, plan.Owner(ws.Namespace))
			}
		}
	}
	// The check refuses before sending: a write to another shard's
	// namespace through the manager's own client.
	foreign := byShard["1"][0]
	before := ms[0].Writes.Total("/namespaces/" + foreign + "/")
	err := ms[0].Client.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: foreign, Name: "x"}})
	if !errors.Is(err, shard.ErrNotOwned) {
		t.Errorf("a write to another shard's namespace: %v", err)
	}
	if ms[0].Writes.Total("/namespaces/"+foreign+"/") != before {
		t.Error("the refused write reached the API server")
	}
}

// While a Lease changes hands, no two processes may write for the same
// shard: a leader that stops renewing (paused) stops writing at its renew
// deadline, before the standby can take the Lease (the lease duration after
// the last renewal it saw).
func TestShards_NoDoubleOwnershipWhileALeaseChangesHands(t *testing.T) {
	plan := shard.EvenPlan(1)
	byShard := fleet(t, plan, 2)
	a := start(t, Options{Plan: plan, Shard: "0", Mode: shard.ModeAuto})
	publishedAll(t, byShard["0"]...)
	b := start(t, Options{Plan: plan, Shard: "0", Mode: shard.ModeAuto})
	time.Sleep(time.Second)
	if !a.Owner.Leading(time.Now()) || b.Owner.Leading(time.Now()) {
		t.Fatalf("a leads %v, b leads %v: want a only", a.Owner.Leading(time.Now()), b.Owner.Leading(time.Now()))
	}
	// Sample both processes' view of themselves through the handover.
	var both, aLeads, bLeads atomic.Int32
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			now := time.Now()
			la, lb := a.Owner.Leading(now), b.Owner.Leading(now)
			if la && lb {
				both.Add(1)
			}
			if la {
				aLeads.Add(1)
			}
			if lb {
				bLeads.Add(1)
			}
		}
	}()
	paused := time.Now()
	a.Lock.Pause()
	defer a.Lock.Resume()
	// The paused leader's writes are refused from its renew deadline on.
	testenv.Eventually(t, 10*time.Second, func() error {
		if a.Owner.Leading(time.Now()) {
			return errors.New("a still counts as leading")
		}
		return nil
	})
	refusedAfter := time.Since(paused)
	ns := byShard["0"][0]
	err := a.Client.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"}})
	if !errors.Is(err, shard.ErrNotOwned) {
		t.Errorf("a paused leader's write past its renew deadline: %v", err)
	}
	// The standby takes over and publishes a change.
	testenv.Eventually(t, 30*time.Second, func() error {
		if !b.Owner.Leading(time.Now()) {
			return errors.New("b has not taken the Lease yet")
		}
		return nil
	})
	tookOver := time.Since(paused)
	// Let the sampler see b lead too: on a loaded machine it may not have
	// run since b took over.
	testenv.Eventually(t, 10*time.Second, func() error {
		if bLeads.Load() == 0 {
			return errors.New("no sample has seen b lead yet")
		}
		return nil
	})
	close(stop)
	<-sampled
	t.Logf("a refused writes %.1fs after its last renewal; b took the Lease after %.1fs", refusedAfter.Seconds(), tookOver.Seconds())
	if both.Load() != 0 {
		t.Errorf("both processes counted as leading in %d samples", both.Load())
	}
	if aLeads.Load() == 0 || bLeads.Load() == 0 {
		t.Errorf("samples: a led %d, b led %d", aLeads.Load(), bLeads.Load())
	}
	kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}})
	kit.Published(t, ns, "after")
	if n := contextWrites(b, ns); n == 0 {
		t.Error("the new leader did not publish the new Workspace")
	}
}

// Each leader publishes its ranges and the ShardsCovered condition on its
// Lease; with one shard of three not running, every process reports the
// uncovered third, and the alarm clears when it starts.
func TestShards_UncoveredRangesRaiseTheAlarm(t *testing.T) {
	plan := shard.EvenPlan(3)
	m0 := start(t, Options{Plan: plan, Shard: "0", Mode: shard.ModeClient})
	m1 := start(t, Options{Plan: plan, Shard: "1", Mode: shard.ModeClient})
	var cond metav1.Condition
	testenv.Eventually(t, 30*time.Second, func() error {
		c, ok := m0.Watcher.Last()
		if !ok || c.Uncovered < 0.33 || c.Uncovered > 0.34 || len(c.Gaps) != 1 || c.Gaps[0] != plan.Shards[2].Ranges[0] {
			return fmt.Errorf("coverage %+v", c)
		}
		l := lease(t, plan, "1")
		if l.Annotations[shard.AnnotationRanges] != shard.EncodeRanges(plan.Shards[1].Ranges) {
			return fmt.Errorf("lease ranges %q", l.Annotations[shard.AnnotationRanges])
		}
		if err := jsonUnmarshal(l.Annotations[shard.AnnotationCondition], &cond); err != nil || cond.Status != metav1.ConditionFalse || cond.Reason != shard.ReasonUncovered {
			return fmt.Errorf("lease condition %+v (%v)", cond, err)
		}
		return nil
	})
	if !strings.Contains(cond.Message, plan.Shards[2].Ranges[0].StartHex()) {
		t.Errorf("the condition does not name the gap: %s", cond.Message)
	}
	if c, _ := m1.Watcher.Last(); c.Covered() {
		t.Error("shard 1 sees full coverage")
	}
	start(t, Options{Plan: plan, Shard: "2", Mode: shard.ModeClient})
	testenv.Eventually(t, 30*time.Second, func() error {
		if c, _ := m0.Watcher.Last(); !c.Covered() {
			return fmt.Errorf("coverage %+v", c)
		}
		if err := jsonUnmarshal(lease(t, plan, "0").Annotations[shard.AnnotationCondition], &cond); err != nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("lease condition %+v (%v)", cond, err)
		}
		return nil
	})
}

func lease(t *testing.T, plan *shard.Plan, name string) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	err := kit.Client.Get(context.Background(), client.ObjectKey{Namespace: PlatformNS, Name: shard.LeaseName(plan, name)}, l)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return l
}

// A new leader takes its slice without rewriting what is current: no
// ConfigMap write and no status patch for Workspaces that did not change,
// one write for one that did.
func TestShards_NewLeaderAdoptsCurrentContextsWithoutWrites(t *testing.T) {
	plan := shard.EvenPlan(1)
	byShard := fleet(t, plan, 5)
	a := start(t, Options{Plan: plan, Shard: "0", Mode: shard.ModeAuto})
	publishedAll(t, byShard["0"]...)
	if err := a.Stop(); err != nil && !strings.Contains(err.Error(), "leader election lost") {
		t.Fatal(err)
	}
	// One Workspace changes while nobody leads.
	changed := byShard["0"][0]
	testenv.Update(t, kit, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: changed, Name: "dev"}}, func(ws *v1alpha1.Workspace) {
		ws.Spec.Instructions = []v1alpha1.InstructionSource{{Inline: "NEW RULE"}}
	})
	b := start(t, Options{Plan: plan, Shard: "0", Mode: shard.ModeAuto})
	kit.Published(t, changed, "dev", "NEW RULE")
	// Give the new leader time to go through its whole slice.
	time.Sleep(3 * time.Second)
	for _, ns := range byShard["0"] {
		n := contextWrites(b, ns)
		switch {
		case ns == changed && n == 0:
			t.Errorf("the changed Workspace in %s was not written", ns)
		case ns != changed && n != 0:
			t.Errorf("the new leader wrote %d times in %s, whose context was current: %v", n, ns, b.Writes.Matching("/namespaces/"+ns+"/"))
		}
	}
}

// With the selector off (an API server without the gate, or one that
// ignores it), the client-side filter alone keeps other shards' objects out
// of the cache, and platform namespaces stay in every shard's view.
func TestShards_ClientSideFilterKeepsTheCacheToTheShard(t *testing.T) {
	plan := shard.EvenPlan(3)
	byShard := fleet(t, plan, 2)
	kit.Create(t, testenv.Skill(PlatformNS, "shared-"+rand.String(4), "The platform's shared skill.", "# Shared\n"))
	for _, s := range plan.Shards {
		m := start(t, Options{Plan: plan, Shard: s.Name, Mode: shard.ModeClient})
		publishedAll(t, byShard[s.Name]...)
		var wss v1alpha1.WorkspaceList
		if err := m.Client.List(context.Background(), &wss); err != nil {
			t.Fatal(err)
		}
		for _, ws := range wss.Items {
			if !m.Owner.Owns(ws.Namespace) {
				t.Errorf("shard %s caches a Workspace of %s", s.Name, ws.Namespace)
			}
		}
		var skills v1alpha1.SkillList
		if err := m.Client.List(context.Background(), &skills, client.InNamespace(PlatformNS)); err != nil || len(skills.Items) == 0 {
			t.Errorf("shard %s does not see the platform's Skills: %v", s.Name, err)
		}
		if err := m.Stop(); err != nil && !strings.Contains(err.Error(), "leader election lost") {
			t.Fatal(err)
		}
	}
}
