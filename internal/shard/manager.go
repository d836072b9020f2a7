package shard

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
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

// workspacesResource is what Probe lists.
var workspacesResource = schema.GroupVersionResource{Group: "loadout.dev", Version: "v1alpha1", Resource: "workspaces"}

// Probe lists one Workspace with this shard's selector and reports whether
// the API server applied it (ListMeta.shardInfo echoes the selector). An API
// server without the ShardedListAndWatch gate, or one older than the
// client, ignores the unknown parameter and returns no shardInfo.
func (o *Ownership) Probe(ctx context.Context, cfg *rest.Config) (bool, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	sel := o.Shard.Selector()
	list, err := mc.Resource(workspacesResource).List(ctx, metav1.ListOptions{ShardSelector: sel, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("probing sharded list: %w", err)
	}
	return list.ShardInfo != nil && list.ShardInfo.Selector == sel, nil
}

// Configure makes a manager run this shard: the cache keeps the shard's
// view (NewInformer), the client checks ownership before every write
// (Guard), and with leader election on, the process elects its shard's
// leader on the shard's own Lease in leaseNamespace. mode decides whether
// lists and watches carry the API server's shard selector.
func (o *Ownership) Configure(ctx context.Context, cfg *rest.Config, opts *ctrl.Options, leaseNamespace string, mode Mode) error {
	switch mode {
	case ModeServer:
		o.useSelector = true
	case ModeClient:
	case ModeAuto, "":
		ok, err := o.Probe(ctx, cfg)
		if err != nil {
			return err
		}
		o.useSelector = ok
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
	lcfg.QPS, lcfg.Burst = 20, 40
	cs, err := kubernetes.NewForConfig(lcfg)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	identity := host + "_" + string(uuid.NewUUID())
	opts.LeaderElectionResourceLockInterface = NewLeaseLock(o, leaseNamespace, identity, cs.CoordinationV1(), *opts.RenewDeadline)
	return nil
}

// UsesSelector reports whether lists and watches carry the shard selector.
func (o *Ownership) UsesSelector() bool { return o != nil && o.useSelector }

// NewWatcher returns the coverage watcher for the Leases in leaseNamespace.
func (o *Ownership) NewWatcher(cfg *rest.Config, leaseNamespace string) (*Watcher, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Watcher{O: o, Namespace: leaseNamespace, Leases: cs.CoordinationV1()}, nil
}
