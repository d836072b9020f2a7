package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// SharedSkill is the platform Skill every fleet Workspace reads.
const SharedSkill = "shared"

// IsolatedNS holds Workspaces that read only their own namespace: a change of
// the shared Skill must not write anything for them.
const IsolatedNS = "bench-isolated"

// Fleet is a set of Workspaces spread over project namespaces, all reading the
// platform namespace, plus a few isolated ones.
type Fleet struct {
	e          *Env
	Namespaces []string
	Workspaces []types.NamespacedName
	Isolated   []types.NamespacedName
	baseline   []types.NamespacedName // bare-client ConfigMaps
	rev        int
}

// NewFleet creates the namespaces (one project Skill each), the shared
// platform Skill and isolated Workspaces that do not read the platform.
func NewFleet(ctx context.Context, e *Env, namespaces, isolated int) (*Fleet, error) {
	f := &Fleet{e: e}
	c := e.Client
	for i := range namespaces {
		ns := fmt.Sprintf("bench-%02d", i)
		f.Namespaces = append(f.Namespaces, ns)
		if err := c.Create(ctx, namespace(ns)); err != nil {
			return nil, err
		}
		if err := c.Create(ctx, projectSkill(ns, "project-notes", 0)); err != nil {
			return nil, err
		}
	}
	if err := c.Create(ctx, sharedSkill(0)); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, namespace(IsolatedNS)); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, projectSkill(IsolatedNS, "project-notes", 0)); err != nil {
		return nil, err
	}
	for i := range isolated {
		f.Isolated = append(f.Isolated, types.NamespacedName{Namespace: IsolatedNS, Name: fmt.Sprintf("iso-%02d", i)})
	}
	return f, nil
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func sharedSkill(rev int) *v1alpha1.Skill {
	return &v1alpha1.Skill{
		ObjectMeta: metav1.ObjectMeta{Namespace: PlatformNS, Name: SharedSkill},
		Spec: v1alpha1.SkillSpec{
			Description: "The platform's shared review checklist.",
			Body:        sharedBody(rev),
		},
	}
}

func sharedBody(rev int) string {
	return fmt.Sprintf("# Shared checklist\n\nRevision marker: %s\n\nCheck tests, docs and naming.\n", revMarker(rev))
}

func revMarker(rev int) string { return fmt.Sprintf("shared-rev-%06d", rev) }

func projectSkill(ns, name string, i int) *v1alpha1.Skill {
	return &v1alpha1.Skill{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.SkillSpec{
			Description: v1alpha1.Description(fmt.Sprintf("Project skill %d of %s.", i, ns)),
			Body:        fmt.Sprintf("# %s\n\nFollow the project's conventions (%d).\n", name, i),
		},
	}
}

func keyOf(o client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

func cmKeys(ws []types.NamespacedName) []string {
	out := make([]string, len(ws))
	for i, k := range ws {
		out[i] = k.Namespace + "/" + k.Name + "-context"
	}
	return out
}

func plainKeys(ks []types.NamespacedName) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return out
}

// Phase is the outcome of one measured step.
type Phase struct {
	Name     string
	N        int // Workspaces affected
	Duration time.Duration
	Writes   WriteCounts
	// Unaffected counts writes for Workspaces the step must not touch.
	Unaffected int
	// CPU used during the step by this process and by the control plane.
	CPU CPUTimes
	// Reconciles of Workspaces during the step.
	Reconciles int
}

// Grow creates Workspaces round robin over the namespaces until there are n,
// and waits until every new one has published its ConfigMap and the manager
// is idle.
func (f *Fleet) Grow(ctx context.Context, n int, timeout time.Duration) (*Phase, error) {
	before, cpu := f.e.Writes.Snapshot(), ReadCPU()
	start := time.Now()
	var added, create []*v1alpha1.Workspace
	for i := len(f.Workspaces); i < n; i++ {
		added = append(added, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{
			Namespace: f.Namespaces[i%len(f.Namespaces)], Name: fmt.Sprintf("ws-%04d", i)}})
	}
	create = added
	if len(f.Workspaces) == 0 {
		// The first step also creates the isolated Workspaces, which read
		// only their own namespace.
		for _, k := range f.Isolated {
			create = append(create, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
				Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}}})
		}
	}
	if err := parallel(ctx, 16, len(create), func(ctx context.Context, i int) error {
		return f.e.Client.Create(ctx, create[i])
	}); err != nil {
		return nil, err
	}
	var all []types.NamespacedName
	for _, ws := range create {
		all = append(all, keyOf(ws))
	}
	done, err := f.e.Tracker.WaitChanged(ctx, cmKeys(all), nil, timeout)
	if err != nil {
		return nil, err
	}
	for _, ws := range added {
		f.Workspaces = append(f.Workspaces, keyOf(ws))
	}
	if err := f.e.Settle(ctx, 2*time.Second, timeout); err != nil {
		return nil, err
	}
	return &Phase{Name: "initial convergence", N: len(all), Duration: done.Sub(start), Writes: f.e.Writes.Snapshot().Since(before),
		CPU: ReadCPU().Sub(cpu)}, nil
}

// Change edits the shared platform Skill once and times until every fleet
// Workspace's ConfigMap carries a new hash; it then waits for the manager to
// be idle and counts the writes of the whole step. changed, if not nil, is
// called when the timed part ends, before the wait for idle (run.go splits
// the CPU profile there: what the change costs before every ConfigMap is
// out, and what comes after, such as the deferred status patches).
func (f *Fleet) Change(ctx context.Context, timeout time.Duration, changed func()) (*Phase, error) {
	keys := cmKeys(f.Workspaces)
	old := f.e.Tracker.Hashes(keys)
	isoOld := f.e.Tracker.Hashes(cmKeys(f.Isolated))
	before, recs := f.e.Writes.Snapshot(), Reconciles()
	f.rev++
	cpu := ReadCPU()
	start := time.Now()
	if err := f.patchShared(ctx, f.rev); err != nil {
		return nil, err
	}
	done, err := f.e.Tracker.WaitChanged(ctx, keys, old, timeout)
	if err != nil {
		return nil, err
	}
	cpu = ReadCPU().Sub(cpu)
	if changed != nil {
		changed()
	}
	if err := f.e.Settle(ctx, 2*time.Second, timeout); err != nil {
		return nil, err
	}
	w := f.e.Writes.Snapshot().Since(before)
	p := &Phase{Name: "one change", N: len(keys), Duration: done.Sub(start), Writes: w, CPU: cpu, Reconciles: Reconciles() - recs,
		Unaffected: w.Sum(func(k Write) bool { return k.Namespace == IsolatedNS })}
	if !maps.Equal(isoOld, f.e.Tracker.Hashes(cmKeys(f.Isolated))) {
		p.Unaffected++
	}
	return p, nil
}

func (f *Fleet) patchShared(ctx context.Context, rev int) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"body": sharedBody(rev)}})
	return f.e.Client.Patch(ctx, sharedSkill(rev), client.RawPatch(types.MergePatchType, patch))
}

// Baseline is the floor of propagation: a bare client with the manager's rate
// limit and concurrency server-side applies n ConfigMaps of the size of a
// published context, timed until the tracker sees every new hash.
func (f *Fleet) Baseline(ctx context.Context, n int, timeout time.Duration) (*Phase, error) {
	sample := &corev1.ConfigMap{}
	if err := f.e.Client.Get(ctx, types.NamespacedName{Namespace: f.Workspaces[0].Namespace, Name: f.Workspaces[0].Name + "-context"}, sample); err != nil {
		return nil, err
	}
	// Create the missing baseline ConfigMaps first, unthrottled and untimed.
	have := len(f.baseline)
	for i := have; i < n; i++ {
		f.baseline = append(f.baseline, types.NamespacedName{Namespace: f.Namespaces[i%len(f.Namespaces)], Name: fmt.Sprintf("baseline-%04d", i)})
	}
	keys := plainKeys(f.baseline[:n])
	setup, err := client.New(f.e.Cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		return nil, err
	}
	if err := applyAll(ctx, setup, f.baseline[have:n], sample.Data, "baseline-setup", 16); err != nil {
		return nil, err
	}
	if _, err := f.e.Tracker.WaitChanged(ctx, keys, nil, timeout); err != nil {
		return nil, err
	}
	old := f.e.Tracker.Hashes(keys)

	cfg := rest.CopyConfig(f.e.Cfg)
	cfg.QPS, cfg.Burst = f.e.Opts.QPS, f.e.Opts.Burst
	bare, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		return nil, err
	}
	f.rev++
	cpu := ReadCPU()
	start := time.Now()
	if err := applyAll(ctx, bare, f.baseline[:n], sample.Data, revMarker(f.rev), f.e.Opts.Concurrency); err != nil {
		return nil, err
	}
	done, err := f.e.Tracker.WaitChanged(ctx, keys, old, timeout)
	if err != nil {
		return nil, err
	}
	return &Phase{Name: "bare client", N: n, Duration: done.Sub(start), CPU: ReadCPU().Sub(cpu)}, nil
}

// applyAll server-side applies one ConfigMap per key with workers in parallel,
// with data of the published size and a hash annotation that changes with
// marker.
func applyAll(ctx context.Context, c client.Client, keys []types.NamespacedName, data map[string]string, marker string, workers int) error {
	return parallel(ctx, workers, len(keys), func(ctx context.Context, i int) error {
		d := maps.Clone(data)
		d[contract.KeySystemPrompt] = marker + "\n" + d[contract.KeySystemPrompt]
		cm := corev1ac.ConfigMap(keys[i].Name, keys[i].Namespace).
			WithLabels(map[string]string{"loadout.dev/bench": "baseline"}).
			WithAnnotations(map[string]string{vocab.ContextHashAnnotation: marker}).
			WithData(d)
		return c.Apply(ctx, cm, client.FieldOwner("bench-baseline"), client.ForceOwnership)
	})
}

// Steady counts the manager's writes over d with nothing changing.
func (f *Fleet) Steady(ctx context.Context, d time.Duration) *Phase {
	before := f.e.Writes.Snapshot()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	return &Phase{Name: "steady state", Duration: d, Writes: f.e.Writes.Snapshot().Since(before)}
}

// StormResult is the outcome of Storm.
type StormResult struct {
	Phase
	Changes int
	// Settle is the time from the last change until every ConfigMap carried
	// the final revision.
	Settle time.Duration
	// Problems lists what was wrong with the final state; empty when right.
	Problems []string
}

// Storm changes the shared Skill rate times a second for d, then waits until
// every ConfigMap carries the final revision and checks the final state: each
// ConfigMap's hash equals its Workspace's status hash and contains the last
// revision, the queue is empty, the isolated Workspaces were not written and
// no extra ConfigMaps exist.
func (f *Fleet) Storm(ctx context.Context, rate int, d time.Duration, timeout time.Duration) (*StormResult, error) {
	before, recs := f.e.Writes.Snapshot(), Reconciles()
	isoOld := f.e.Tracker.Hashes(cmKeys(f.Isolated))
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	changes := 0
	for time.Now().Before(end) {
		f.rev++
		if err := f.patchShared(ctx, f.rev); err != nil {
			return nil, err
		}
		changes++
		<-tick.C
	}
	last := time.Now()
	marker := revMarker(f.rev)
	r := &StormResult{Changes: changes}
	deadline := time.Now().Add(timeout)
	for {
		stale, err := f.staleContexts(ctx, marker)
		if err != nil {
			return nil, err
		}
		if stale == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("storm: %d ConfigMaps without %s after %s", stale, marker, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.Settle = time.Since(last)
	if err := f.e.Settle(ctx, 3*time.Second, timeout); err != nil {
		return nil, err
	}
	w := f.e.Writes.Snapshot().Since(before)
	r.Phase = Phase{Name: "storm", N: len(f.Workspaces), Duration: d, Writes: w, Reconciles: Reconciles() - recs,
		Unaffected: w.Sum(func(k Write) bool { return k.Namespace == IsolatedNS })}
	if !maps.Equal(isoOld, f.e.Tracker.Hashes(cmKeys(f.Isolated))) {
		r.Problems = append(r.Problems, "isolated Workspaces' ConfigMaps changed")
	}
	if r.Unaffected > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d writes for isolated Workspaces", r.Unaffected))
	}
	if depth := WorkqueueDepth(); depth != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("workqueue depth %v after settling", depth))
	}
	probs, err := f.CheckFinal(ctx, marker)
	if err != nil {
		return nil, err
	}
	r.Problems = append(r.Problems, probs...)
	return r, nil
}

// staleContexts counts fleet ConfigMaps whose skills lack marker.
func (f *Fleet) staleContexts(ctx context.Context, marker string) (int, error) {
	var list corev1.ConfigMapList
	if err := f.e.Client.List(ctx, &list, client.HasLabels{vocab.WorkspaceLabel}); err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		if strings.Contains(cm.Data[contract.KeySkills], marker) {
			have[cm.Namespace+"/"+cm.Name] = true
		}
	}
	stale := 0
	for _, k := range cmKeys(f.Workspaces) {
		if !have[k] {
			stale++
		}
	}
	return stale, nil
}

// CheckFinal checks every Workspace: Ready, its ConfigMap carries marker and
// the hash in its status, and there is exactly one context ConfigMap per
// Workspace.
func (f *Fleet) CheckFinal(ctx context.Context, marker string) ([]string, error) {
	var list corev1.ConfigMapList
	if err := f.e.Client.List(ctx, &list, client.HasLabels{vocab.WorkspaceLabel}); err != nil {
		return nil, err
	}
	var wsl v1alpha1.WorkspaceList
	if err := f.e.Client.List(ctx, &wsl); err != nil {
		return nil, err
	}
	cms := map[string]*corev1.ConfigMap{}
	for i := range list.Items {
		cms[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
	}
	var problems []string
	if len(list.Items) != len(wsl.Items) {
		problems = append(problems, fmt.Sprintf("%d context ConfigMaps for %d Workspaces", len(list.Items), len(wsl.Items)))
	}
	fleet := map[string]bool{}
	for _, k := range f.Workspaces {
		fleet[k.String()] = true
	}
	for _, ws := range wsl.Items {
		cm := cms[ws.Namespace+"/"+ws.ConfigMapName()]
		switch {
		case cm == nil:
			problems = append(problems, ws.Namespace+"/"+ws.Name+": no ConfigMap")
		case ws.Status.Context == nil || ws.Status.Context.Hash != cm.Annotations[vocab.ContextHashAnnotation]:
			problems = append(problems, ws.Namespace+"/"+ws.Name+": status hash differs from the ConfigMap's")
		case fleet[ws.Namespace+"/"+ws.Name] && !strings.Contains(cm.Data[contract.KeySkills], marker):
			problems = append(problems, ws.Namespace+"/"+ws.Name+": ConfigMap lacks "+marker)
		case ws.Status.ObservedGeneration != ws.Generation:
			problems = append(problems, ws.Namespace+"/"+ws.Name+": status not observed")
		}
		if len(problems) > 10 {
			problems = append(problems, "…")
			break
		}
	}
	return problems, nil
}

// Settle waits until the manager made no write for quiet and its queue is
// empty.
func (e *Env) Settle(ctx context.Context, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := e.Writes.Snapshot().Total()
	since := time.Now()
	for {
		time.Sleep(250 * time.Millisecond)
		n := e.Writes.Snapshot().Total()
		if n != last || WorkqueueDepth() != 0 {
			last, since = n, time.Now()
		}
		if time.Since(since) >= quiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("manager not idle after %s", timeout)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, workers, n int, f func(context.Context, int) error) error {
	if n <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
