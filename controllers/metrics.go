package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Loadout's own metrics, served beside controller-runtime's on the manager's
// metrics endpoint.
var (
	reconcilesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "loadout_workspace_reconciles_total",
		Help: "Workspace reconciles by result: ready, invalid (a condition explains it) or error (retried).",
	}, []string{"result"})
	resolutionDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "loadout_resolution_duration_seconds",
		Help:    "Time to gather, load extensions and resolve one Workspace's context.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	})
	publishedBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "loadout_published_context_bytes",
		Help:    "Size of each context ConfigMap applied.",
		Buckets: prometheus.ExponentialBuckets(1024, 4, 8),
	})
	configMapApplies = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "loadout_configmap_applies_total",
		Help: "Server-side applies of context ConfigMaps (writes).",
	})
	extensionsTotal = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "loadout_extensions",
		Help: "Extensions visible to Workspaces, summed over all Workspaces, by state (Loaded, SkippedUntrusted, Rejected).",
	}, []string{"state"})
	// workspaceExtensions names every Workspace in its labels, so a scraper
	// could enumerate every tenant's Workspaces: it is exported only when
	// the manager runs with --metrics-per-workspace.
	workspaceExtensions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "loadout_workspace_extensions",
		Help: "Extensions visible to each Workspace, by state (Loaded, SkippedUntrusted, Rejected); only with --metrics-per-workspace.",
	}, []string{"namespace", "workspace", "state"})
	// platformNamespaceTrusted names platform namespaces only, which the
	// manager's flags list: no tenant's name appears in it.
	platformNamespaceTrusted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "loadout_platform_namespace_trusted",
		Help: "1 when the platform namespace exists with a valid loadout.dev/trust label, 0 when it is missing or unlabelled: its platform policy then reaches no Workspace.",
	}, []string{"namespace"})
)

func init() {
	metrics.Registry.MustRegister(reconcilesTotal, resolutionDuration, publishedBytes, configMapApplies, extensionsTotal, workspaceExtensions, platformNamespaceTrusted)
	// Every state's total is a series from the start, 0 until counted:
	// extensionCounts.set only touches the totals that change.
	for _, s := range extensionStates {
		extensionsTotal.WithLabelValues(string(s)).Set(0)
	}
}

var extensionStates = [...]vocab.ExtensionLoadState{vocab.ExtensionLoaded, vocab.ExtensionSkippedUntrusted, vocab.ExtensionRejected}

// stateCounts is one Workspace's extensions by state, indexed like
// extensionStates.
type stateCounts [len(extensionStates)]int

// countStates counts a Workspace's extensions by state; a state outside
// extensionStates is not exported and not counted.
func countStates(exts []v1alpha1.ExtensionState) stateCounts {
	var c stateCounts
	for _, e := range exts {
		for i, s := range extensionStates {
			if e.State == s {
				c[i]++
			}
		}
	}
	return c
}

// extensionCounts remembers each Workspace's extension counts, so that
// loadout_extensions is their sum without a label naming any Workspace. It
// keeps the sum as it goes: every reconcile calls set, and re-adding every
// Workspace's counts there made a change that touches N Workspaces cost N²
// under one lock, a tenth of the manager's CPU at 1,000 Workspaces
// (docs/benchmarks.md, "With the brakes off").
type extensionCounts struct {
	mu     sync.Mutex
	counts map[types.NamespacedName]stateCounts
	totals stateCounts
}

var visibleExtensions = extensionCounts{counts: map[types.NamespacedName]stateCounts{}}

// set records key's counts (nil forgets key) and refreshes the totals.
func (e *extensionCounts) set(key types.NamespacedName, counts *stateCounts) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.counts[key]
	var now stateCounts
	if counts == nil {
		delete(e.counts, key)
	} else {
		now = *counts
		e.counts[key] = now
	}
	for i, s := range extensionStates {
		if now[i] == old[i] {
			continue
		}
		e.totals[i] += now[i] - old[i]
		extensionsTotal.WithLabelValues(string(s)).Set(float64(e.totals[i]))
	}
}

// observeReconcile counts one reconcile and refreshes the extension gauges:
// the totals always, the per-Workspace series only when perWorkspace is set.
func observeReconcile(ws *v1alpha1.Workspace, err error, perWorkspace bool) {
	switch {
	case err != nil:
		reconcilesTotal.WithLabelValues("error").Inc()
	case meta.IsStatusConditionTrue(ws.Status.Conditions, string(vocab.ConditionReady)):
		reconcilesTotal.WithLabelValues("ready").Inc()
	default:
		reconcilesTotal.WithLabelValues("invalid").Inc()
	}
	counts := countStates(ws.Status.Extensions)
	visibleExtensions.set(types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}, &counts)
	if !perWorkspace {
		return
	}
	for i, s := range extensionStates {
		workspaceExtensions.WithLabelValues(ws.Namespace, ws.Name, string(s)).Set(float64(counts[i]))
	}
}

func forgetWorkspaceMetrics(key types.NamespacedName) {
	visibleExtensions.set(key, nil)
	for _, s := range extensionStates {
		workspaceExtensions.DeleteLabelValues(key.Namespace, key.Name, string(s))
	}
}
