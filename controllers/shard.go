package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/loadout-dev/loadout/internal/shard"
)

// ownedBy keeps the objects of the shard's own namespaces. A shard's cache
// also holds the platform namespaces (every Workspace reads them), but only
// the shard that owns a platform namespace writes there; the client refuses
// any other write (shard.Ownership.Guard), and this predicate keeps the
// controllers from trying.
func ownedBy(o *shard.Ownership) []predicate.Predicate {
	if o == nil {
		return nil
	}
	return []predicate.Predicate{predicate.NewPredicateFuncs(func(obj client.Object) bool { return o.Owns(obj.GetNamespace()) })}
}

// contextAdoptions counts context ConfigMaps a process took over without a
// write: a restart or a shard's new leader found them current (adoptable).
var contextAdoptions = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "loadout_configmap_adoptions_total",
	Help: "Context ConfigMaps taken over without a write by a new process (restart or a shard's new leader): current hash, current signing keys, written by Loadout alone.",
})

func init() { metrics.Registry.MustRegister(contextAdoptions) }
