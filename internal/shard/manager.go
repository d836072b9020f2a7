package shard

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Defaults of the shard Lease, as controller-runtime's.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
)

// Mode says how a shard's cache is filtered.
type Mode string

const (
	// ModeAuto probes the API server and uses its shard selector when it
	// applies it.
	ModeAuto Mode = "auto"
	// ModeServer always sends the selector (and still filters client-side).
	ModeServer Mode = "server"
	// ModeClient never sends it: client-side filtering only.
	ModeClient Mode = "client"
)

// probes are the resources Probe lists, one per API server code path, and
// the kinds each answers for: built-in resources (ConfigMaps) and custom
// resources (the loadout.dev kinds) may differ: in Kubernetes v1.37 with the
// ShardedListAndWatch gate, ConfigMaps are sharded server-side and custom
// resources are not (measured; docs/operations.md).
var probes = []struct {
	gvr   schema.GroupVersionResource
	kinds []string
}{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, []string{"ConfigMap"}},
	{schema.GroupVersionResource{Group: "loadout.dev", Version: "v1alpha1", Resource: "workspaces"}, []string{"Workspace", "Skill", "Template", "Extension"}},
}

// Probe lists one object of each probed resource with this shard's selector
// and reports, per kind, whether the API server applied it
// (ListMeta.shardInfo echoes the selector). An API server without the
// ShardedListAndWatch gate, or one older than the client, ignores the
// unknown parameter and returns no shardInfo.
func (o *Ownership) Probe(ctx context.Context, cfg *rest.Config) (map[string]bool, error) {
	// The dynamic client reads the list as JSON: the metadata client's
	// PartialObjectMetadataList loses shardInfo in the API server's
	// conversion (measured on v1.37.2), though the selector still applies.
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sel := o.Shard.Selector()
	out := map[string]bool{}
	for _, p := range probes {
		list, err := dc.Resource(p.gvr).List(ctx, metav1.ListOptions{ShardSelector: sel, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("probing sharded list of %s: %w", p.gvr.Resource, err)
		}
		echoed, _, _ := unstructured.NestedString(list.Object, "metadata", "shardInfo", "selector")
		for _, k := range p.kinds {
			out[k] = echoed == sel
			v := 0.0
			if out[k] {
				v = 1
			}
			shardServerSide.WithLabelValues(k).Set(v)
		}
	}
	return out, nil
}

// Configure makes a manager run this shard: the cache keeps the shard's
// view (NewInformer), the client checks ownership before every write
// (Guard), and with leader election on, the process elects its shard's
// leader on the shard's own Lease in leaseNamespace. mode decides whether
// lists and watches carry the API server's shard selector.
func (o *Ownership) Configure(ctx context.Context, cfg *rest.Config, opts *ctrl.Options, leaseNamespace string, mode Mode) error {
	switch mode {
	case ModeServer:
		o.selectorKinds = map[string]bool{}
		for k := range selectedKinds {
			o.selectorKinds[k] = true
		}
	case ModeClient:
		o.selectorKinds = nil
	case ModeAuto, "":
		kinds, err := o.Probe(ctx, cfg)
		if err != nil {
			return err
		}
		o.selectorKinds = kinds
	default:
		return fmt.Errorf("shard selector mode %q: want auto, server or client", mode)
	}
	opts.Cache.NewInformer = o.NewInformer
	opts.NewClient = o.NewClient
	if !opts.LeaderElection {
		return nil
	}
	if opts.LeaseDuration == nil {
		d := DefaultLeaseDuration
		opts.LeaseDuration = &d
	}
	if opts.RenewDeadline == nil {
		d := DefaultRenewDeadline
		opts.RenewDeadline = &d
	}
	lcfg := rest.CopyConfig(cfg)
	if opts.LeaderElectionConfig != nil {
		lcfg = rest.CopyConfig(opts.LeaderElectionConfig)
	}
	// The Lease is renewed on its own client, so the manager's rate limit
	// never delays a renewal.
	lcfg.QPS, lcfg.Burst, lcfg.RateLimiter = 20, 40, nil
	cs, err := kubernetes.NewForConfig(lcfg)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	identity := host + "_" + string(uuid.NewUUID())
	opts.LeaderElectionResourceLockInterface = NewLeaseLock(o, leaseNamespace, identity, cs.CoordinationV1(), *opts.RenewDeadline)
	return nil
}

// SelectorKinds lists the kinds whose lists and watches carry the shard
// selector (sorted).
func (o *Ownership) SelectorKinds() []string {
	if o == nil {
		return nil
	}
	var out []string
	for k, ok := range o.selectorKinds {
		if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// NewWatcher returns the coverage watcher for the Leases in leaseNamespace.
func (o *Ownership) NewWatcher(cfg *rest.Config, leaseNamespace string) (*Watcher, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Watcher{O: o, Namespace: leaseNamespace, Leases: cs.CoordinationV1()}, nil
}
