// Package apiconn is how the manager talks to the API server: one
// client-side rate limit for every client, uncompressed responses, and the
// REST mappings of the group versions its scheme holds from the server's own
// lists of them. Each choice cuts what a manager process (an idle shard
// most of all) holds at rest; docs/benchmarks.md ("### Shards") has the
// measurements.
package apiconn

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// Options are the manager's --kube-api-* flags.
type Options struct {
	// QPS and Burst, if QPS > 0, are one token bucket for every client
	// built from the config: client-go otherwise gives each resource's REST
	// client its own budget.
	QPS   float32
	Burst int
	// Compression asks the API server for gzip-compressed responses. Off,
	// the default: the API server compresses lists and watch streams for
	// clients that accept it, and every open watch then holds a gzip reader
	// (a 32 KiB window and its tables, about 40 KiB a watch, for the life of
	// the watch) besides the CPU on both ends, to save bytes on the
	// cluster's own network between a manager and its API server.
	Compression bool
}

// Configure applies o to cfg before any client is built from it.
func Configure(cfg *rest.Config, o Options) {
	cfg.DisableCompression = !o.Compression
	if o.QPS > 0 {
		cfg.QPS, cfg.Burst = o.QPS, o.Burst
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(o.QPS, o.Burst)
	}
}

// NewMapper is the manager's RESTMapper (ctrl.Options.MapperProvider).
// controller-runtime's dynamic mapper answers its first question with the
// server's aggregated discovery and keeps the mappings of every group the
// server serves (about 360 KiB against envtest's, more with a cluster's
// CRDs); the manager needs two (kubescheme.ManagerGroupVersions). NewMapper lists those
// once, so a kind's resource name and scope are the server's, and a missing
// CRD fails the start with the group version's name. Any other kind goes to
// the dynamic mapper, which does not ask the server until then.
func NewMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	groups := make([]*restmapper.APIGroupResources, 0, len(kubescheme.ManagerGroupVersions))
	for _, gv := range kubescheme.ManagerGroupVersions {
		list, err := dc.ServerResourcesForGroupVersion(gv.String())
		if err != nil {
			return nil, fmt.Errorf("the API server's resources of %s (are the CRDs installed?): %w", gv, err)
		}
		version := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		groups = append(groups, &restmapper.APIGroupResources{
			Group:              metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{version}, PreferredVersion: version},
			VersionedResources: map[string][]metav1.APIResource{gv.Version: list.APIResources},
		})
	}
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return firstHit{restmapper.NewDiscoveryRESTMapper(groups), dynamic}, nil
}

// firstHit asks known and, only for what known does not map, the dynamic
// mapper. meta.FirstHitRESTMapper would do, but a MultiRESTMapper asks
// every mapper for KindsFor and ResourcesFor, and so the dynamic one's
// discovery, on every call.
type firstHit struct {
	known, dynamic meta.RESTMapper
}

func fallThrough(err error) bool { return meta.IsNoMatchError(err) }

func (m firstHit) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	k, err := m.known.KindFor(r)
	if fallThrough(err) {
		return m.dynamic.KindFor(r)
	}
	return k, err
}

func (m firstHit) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	k, err := m.known.KindsFor(r)
	if fallThrough(err) {
		return m.dynamic.KindsFor(r)
	}
	return k, err
}

func (m firstHit) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	res, err := m.known.ResourceFor(r)
	if fallThrough(err) {
		return m.dynamic.ResourceFor(r)
	}
	return res, err
}

func (m firstHit) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	res, err := m.known.ResourcesFor(r)
	if fallThrough(err) {
		return m.dynamic.ResourcesFor(r)
	}
	return res, err
}

func (m firstHit) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	r, err := m.known.RESTMapping(gk, versions...)
	if fallThrough(err) {
		return m.dynamic.RESTMapping(gk, versions...)
	}
	return r, err
}

func (m firstHit) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	r, err := m.known.RESTMappings(gk, versions...)
	if fallThrough(err) || (err == nil && len(r) == 0) {
		return m.dynamic.RESTMappings(gk, versions...)
	}
	return r, err
}

func (m firstHit) ResourceSingularizer(resource string) (string, error) {
	s, err := m.known.ResourceSingularizer(resource)
	if err != nil {
		return m.dynamic.ResourceSingularizer(resource)
	}
	return s, nil
}
