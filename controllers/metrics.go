package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/loadout-dev/loadout/api/v1alpha1"
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
	workspaceExtensions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "loadout_workspace_extensions",
		Help: "Extensions visible to each Workspace, by state (Loaded, SkippedUntrusted, Rejected).",
	}, []string{"namespace", "workspace", "state"})
)

func init() {
	metrics.Registry.MustRegister(reconcilesTotal, resolutionDuration, publishedBytes, configMapApplies, workspaceExtensions)
}

var extensionStates = []v1alpha1.ExtensionLoadState{v1alpha1.ExtensionLoaded, v1alpha1.ExtensionSkippedUntrusted, v1alpha1.ExtensionRejected}

// observeReconcile counts one reconcile and refreshes the Workspace's
// extension gauges.
func observeReconcile(ws *v1alpha1.Workspace, err error) {
	switch {
	case err != nil:
		reconcilesTotal.WithLabelValues("error").Inc()
	case meta.IsStatusConditionTrue(ws.Status.Conditions, v1alpha1.ConditionReady):
		reconcilesTotal.WithLabelValues("ready").Inc()
	default:
		reconcilesTotal.WithLabelValues("invalid").Inc()
	}
	counts := map[v1alpha1.ExtensionLoadState]int{}
	for _, e := range ws.Status.Extensions {
		counts[e.State]++
	}
	for _, s := range extensionStates {
		workspaceExtensions.WithLabelValues(ws.Namespace, ws.Name, string(s)).Set(float64(counts[s]))
	}
}

func forgetWorkspaceMetrics(key types.NamespacedName) {
	for _, s := range extensionStates {
		workspaceExtensions.DeleteLabelValues(key.Namespace, key.Name, string(s))
	}
}
