package shard

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	shardWriteRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "loadout_shard_write_refusals_total",
		Help: "Writes the ownership check refused before they were sent, by reason: ForeignNamespace (another shard's namespace) or LeaseNotHeld (this process does not hold its shard's Lease with time to spare).",
	}, []string{"reason"})
	shardUncovered = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "loadout_shard_uncovered_fraction",
		Help: "Share of the namespace hash space that no live shard Lease covers (0 when every namespace has a leader).",
	})
	shardOverlap = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "loadout_shard_overlap_fraction",
		Help: "Share of the namespace hash space that two or more live shard Leases claim (during a plan change).",
	})
	shardDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "loadout_shard_filtered_objects_total",
		Help: "Objects of other shards' namespaces the client-side filter kept out of the cache, by kind.",
	}, []string{"kind"})
	shardServerSide = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "loadout_shard_server_side_selector",
		Help: "1 when the start-up probe found the API server shards lists of the kind (ListMeta.shardInfo echoed the selector), so the cache asks for its shard only; 0 when it does not and the client-side filter alone keeps the shard.",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(shardWriteRefusals, shardUncovered, shardOverlap, shardDropped, shardServerSide)
}
