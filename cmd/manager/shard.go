package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/loadout-dev/loadout/internal/shard"
)

// shardOptions are the sharding flags.
type shardOptions struct {
	plan     string
	name     string
	selector string
}

func (s *shardOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&s.plan, "shard-plan", "",
		"File with the shard plan (YAML: shards[].name, shards[].ranges[].start/end over the 64-bit FNV-1a hash of namespace names; `loadout shards plan` writes one). Empty runs one manager for every namespace.")
	fs.StringVar(&s.name, "shard", "",
		"The shard of --shard-plan this process runs. It caches and writes only the namespaces whose hash falls in the shard's ranges (plus reads of the platform namespaces), and elects its leader on the shard's own Lease, loadout-shard-<plan id>-<shard>.")
	fs.StringVar(&s.selector, "shard-selector", string(shard.ModeAuto),
		"How the cache asks for its shard: auto (probe: the API server's shardSelector when it applies it, the ShardedListAndWatch gate), server (always send it) or client (never). Every mode also filters client-side, so other shards' objects never enter the cache.")
}

// ownership loads the plan, or returns nil for an unsharded manager.
func (s *shardOptions) ownership(platform []string) (*shard.Ownership, error) {
	if s.plan == "" {
		if s.name != "" {
			return nil, fmt.Errorf("--shard=%s needs --shard-plan", s.name)
		}
		return nil, nil
	}
	b, err := os.ReadFile(s.plan)
	if err != nil {
		return nil, err
	}
	plan, err := shard.ParsePlan(b)
	if err != nil {
		return nil, fmt.Errorf("--shard-plan=%s: %w", s.plan, err)
	}
	if s.name == "" {
		return nil, fmt.Errorf("--shard-plan needs --shard, one of the plan's %d shards", len(plan.Shards))
	}
	return shard.NewOwnership(plan, s.name, platform)
}

// configure applies the shard to the manager options; leases go to
// leaseNamespace.
func (s *shardOptions) configure(ctx context.Context, o *shard.Ownership, cfg *rest.Config, opts *ctrl.Options, leaseNamespace string) error {
	if o == nil {
		return nil
	}
	if err := o.Configure(ctx, cfg, opts, leaseNamespace, shard.Mode(s.selector)); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Running one shard", "plan", o.Plan.ID(), "shard", o.Shard.Name,
		"ranges", shard.EncodeRanges(o.Shard.Ranges), "serverSideSelector", o.SelectorKinds(),
		"lease", shard.LeaseName(o.Plan, o.Shard.Name))
	return nil
}
