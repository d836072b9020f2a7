package controllers

import (
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// platformInstructionReads counts reads of platform-namespace instructions
// ConfigMaps by where they were answered.
var platformInstructionReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "loadout_platform_instructions_reads_total",
	Help: "Reads of platform-namespace instructions ConfigMaps by source: cache, or live (not labelled, missing, or the cache not yet at the version the watch showed).",
}, []string{"source"})

func init() { metrics.Registry.MustRegister(platformInstructionReads) }

// instructionsCache holds the platform namespaces' labelled instructions
// ConfigMaps with their data: every Workspace may read them, so a platform
// instructions change at 100k Workspaces would otherwise be 100k GETs. The
// manager's main cache keeps ConfigMap metadata only (tenants' ConfigMaps
// are many and none of its business); this one holds only what the
// platform labelled loadout.dev/instructions=true.
type instructionsCache struct {
	cache.Cache
}

// GetCache makes the manager start it with its caches and wait for its sync
// before the controllers start.
func (c instructionsCache) GetCache() cache.Cache { return c.Cache }

// newInstructionsReader returns a reader that answers Gets of labelled
// platform-namespace ConfigMaps from a cache of their own and everything
// else from live. A cached ConfigMap is used only when it is at the
// resourceVersion the manager's metadata cache (whose events trigger the
// reconcile) shows, so a reconcile never reads instructions older than the
// change it runs for; otherwise, and for a ConfigMap not there (missing,
// or not labelled: Gather says why), it reads live.
func newInstructionsReader(ctx context.Context, mgr ctrl.Manager, platform []string, live client.Reader) (client.Reader, error) {
	if len(platform) == 0 {
		return live, nil
	}
	namespaces := map[string]cache.Config{}
	for _, ns := range platform {
		namespaces[ns] = cache.Config{}
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultNamespaces:    namespaces,
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{vocab.InstructionsLabel: "true"}),
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		return nil, err
	}
	if err := mgr.Add(instructionsCache{c}); err != nil {
		return nil, err
	}
	return &instructionsReader{Reader: live, cache: c, meta: mgr.GetClient(), platform: platform}, nil
}

type instructionsReader struct {
	client.Reader // live
	cache         client.Reader
	meta          client.Reader
	platform      []string
}

func (r *instructionsReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || !slices.Contains(r.platform, key.Namespace) {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	if err := r.cache.Get(ctx, key, cm); err == nil {
		m := configMapMetadata()
		if err := r.meta.Get(ctx, key, m); err == nil && m.ResourceVersion == cm.ResourceVersion {
			platformInstructionReads.WithLabelValues("cache").Inc()
			return nil
		}
	}
	platformInstructionReads.WithLabelValues("live").Inc()
	return r.Reader.Get(ctx, key, obj, opts...)
}
