package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/managerlog"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testmanager"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// PlatformNS is the manager's platform namespace in the harness.
const PlatformNS = "loadout-system"

// Options configure the in-process manager and the bare baseline client.
type Options struct {
	// QPS and Burst are the client-side rate limit of the manager's client and
	// of the baseline client alike: both are set explicitly and reported.
	QPS   float32
	Burst int
	// Concurrency is the manager's MaxConcurrentReconciles and the number of
	// baseline writers.
	Concurrency int
	// Verbose logs the controllers at debug level.
	Verbose bool
}

// Env is a running control plane with the manager in process.
type Env struct {
	Opts   Options
	Cfg    *rest.Config // admin config, unthrottled: setup and observation
	Client client.Client
	Writes *WriteCounter
	// Tracker sees the hash annotation of every ConfigMap.
	Tracker *Tracker

	env    *envtest.Environment
	mgr    *testmanager.Manager
	cancel context.CancelFunc // ends the manager and the tracker
}

// Start starts envtest, the manager and the ConfigMap tracker.
func Start(opts Options) (*Env, error) {
	// Profiling on, so that -profile-dir can read the API server's CPU
	// profile (run.go, apiserverProfile).
	te, cfg, err := testenv.Start(func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Set("profiling", "true")
	})
	if err != nil {
		return nil, err
	}
	e := &Env{Opts: opts, env: te, Writes: &WriteCounter{}}
	ok := false
	defer func() {
		if !ok {
			_ = te.Stop()
		}
	}()
	// The manager's own logger (cmd/manager's), so that what each
	// reconcile's logger costs is measured too; -v logs everything.
	level := zapcore.ErrorLevel
	if opts.Verbose {
		level = zapcore.Level(-2)
	}
	ctrl.SetLogger(managerlog.New(zap.Options{Level: level}))

	scheme := kubescheme.New()

	// Setup and observation are not what is measured: they get their own,
	// effectively unthrottled client.
	e.Cfg = rest.CopyConfig(cfg)
	e.Cfg.QPS, e.Cfg.Burst = 1000, 2000
	if e.Client, err = client.New(e.Cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	platform := namespace(PlatformNS) // labelled as an installation labels it
	platform.Labels = map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}
	if err := e.Client.Create(context.Background(), platform); err != nil {
		return nil, err
	}

	// The manager: the same wiring as cmd/manager, with the client rate limit
	// set explicitly and every request counted.
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.mgr, err = testmanager.Start(ctx, cfg, testmanager.Options{
		RESTConfig: func(c *rest.Config) {
			c.QPS, c.Burst = opts.QPS, opts.Burst
			c.Wrap(e.Writes.wrap)
		},
		Controllers: controllers.Options{
			Policy: workspace.Policy{
				PlatformNamespaces: []string{PlatformNS},
				DefaultTrust:       vocab.TrustRestricted,
			},
			Loader:                  workspace.HostLoader{Outbound: outbound.New(outbound.Options{Timeout: 5 * time.Second})},
			ReconcileTimeout:        2 * time.Minute,
			MaxConcurrentReconciles: opts.Concurrency,
		},
	})
	if err != nil {
		cancel()
		return nil, err
	}

	if e.Tracker, err = startTracker(ctx, e.Cfg); err != nil {
		cancel()
		_ = e.mgr.Stop()
		return nil, err
	}
	ok = true
	return e, nil
}

// Stop stops the manager and the control plane.
func (e *Env) Stop() error {
	e.cancel()
	return errors.Join(e.mgr.Stop(), e.env.Stop())
}

// ---------------------------------------------------------------------------
// Write counting

// Write is one mutating request of the manager, classified.
type Write struct {
	Verb      string // apply, patch, update, create, delete
	Resource  string // configmaps, workspaces/status, skills/status, events, …
	Namespace string
}

// WriteCounter counts the manager's mutating requests by verb, resource and
// namespace. It wraps the RoundTripper of the manager's rest.Config, so it
// sees exactly what the manager sends.
type WriteCounter struct {
	writes testenv.Writes[Write]
}

func (w *WriteCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return w.writes.Wrap(rt, classify)
}

// classify turns a request into verb, resource (with subresource) and namespace.
func classify(req *http.Request) Write {
	verb := strings.ToLower(req.Method)
	switch req.Method {
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			verb = "apply"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	}
	// /api/v1/namespaces/NS/RES/NAME/SUB or /apis/G/V/namespaces/NS/RES/NAME/SUB
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) > 0 && parts[0] == "api" {
		parts = parts[2:]
	} else if len(parts) > 2 {
		parts = parts[3:]
	}
	w := Write{Verb: verb}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		w.Namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) > 0 {
		w.Resource = parts[0]
	}
	if len(parts) > 2 {
		w.Resource += "/" + parts[2]
	}
	return w
}

// Snapshot returns a copy of the counts so far.
func (w *WriteCounter) Snapshot() WriteCounts {
	return w.writes.Counts()
}

// WriteCounts are counted writes.
type WriteCounts map[Write]int

// Since returns the writes made after the earlier snapshot.
func (c WriteCounts) Since(earlier WriteCounts) WriteCounts {
	out := WriteCounts{}
	for k, n := range c {
		if d := n - earlier[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Sum adds the writes for which match returns true.
func (c WriteCounts) Sum(match func(Write) bool) int {
	n := 0
	for k, v := range c {
		if match(k) {
			n += v
		}
	}
	return n
}

// Total is every write.
func (c WriteCounts) Total() int { return c.Sum(func(Write) bool { return true }) }

// ByVerb sums over namespaces: "patch configmaps" → n.
func (c WriteCounts) ByVerb() map[string]int {
	out := map[string]int{}
	for k, v := range c {
		out[k.Verb+" "+k.Resource] += v
	}
	return out
}

// String lists the counts by verb and resource, sorted.
func (c WriteCounts) String() string {
	by := c.ByVerb()
	if len(by) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return strings.Join(parts, ", ")
}

// ---------------------------------------------------------------------------
// ConfigMap tracking

// Tracker follows the context-hash annotation of every ConfigMap through a
// metadata-only informer, so that it holds no ConfigMap data.
type Tracker struct {
	mu     sync.Mutex
	hashes map[string]string // "ns/name" → hash
	notify chan struct{}
}

func startTracker(ctx context.Context, cfg *rest.Config) (*Tracker, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	t := &Tracker{hashes: map[string]string{}, notify: make(chan struct{}, 1)}
	inf := metadatainformer.NewFilteredMetadataInformer(mc, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	set := func(obj any) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return
		}
		t.mu.Lock()
		t.hashes[m.Namespace+"/"+m.Name] = m.Annotations[vocab.ContextHashAnnotation]
		t.mu.Unlock()
		t.poke()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				t.mu.Lock()
				delete(t.hashes, m.Namespace+"/"+m.Name)
				t.mu.Unlock()
				t.poke()
			}
		},
	}); err != nil {
		return nil, err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, errors.New("ConfigMap tracker did not sync")
	}
	return t, nil
}

func (t *Tracker) poke() {
	select {
	case t.notify <- struct{}{}:
	default:
	}
}

// Hashes returns the current hash of each key.
func (t *Tracker) Hashes(keys []string) map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		if h, ok := t.hashes[k]; ok {
			out[k] = h
		}
	}
	return out
}

// WaitChanged waits until every key carries a hash different from its entry
// in old (a missing entry in old: any hash). It returns when that happened
// as seen by the informer.
func (t *Tracker) WaitChanged(ctx context.Context, keys []string, old map[string]string, timeout time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		pending := t.pending(keys, old)
		if pending == 0 {
			return now, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%d of %d ConfigMaps not updated after %s", pending, len(keys), timeout)
		case <-t.notify:
		case <-tick.C:
		}
	}
}

func (t *Tracker) pending(keys []string, old map[string]string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, k := range keys {
		h, ok := t.hashes[k]
		if !ok || h == "" || h == old[k] {
			n++
		}
	}
	return n
}

// Reconciles reads how many times the Workspace controller has reconciled,
// from controller-runtime's metrics registry.
func Reconciles() int {
	return int(testenv.ControllerMetric("controller_runtime_reconcile_total", "controller", "workspace"))
}

// WorkqueueDepth reads the Workspace controller's queue depth from
// controller-runtime's metrics registry.
func WorkqueueDepth() float64 {
	return testenv.ControllerMetric("workqueue_depth", "name", "workspace")
}
