package shard

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNotOwned is returned for a write this process may not make: the
// namespace belongs to another shard, or this process does not hold its
// shard's Lease (any more).
var ErrNotOwned = errors.New("not owned by this shard")

// Ownership is one process's view of the plan: the shard it runs, the
// platform namespaces every shard sees, and whether it holds the shard's
// Lease now. A nil *Ownership is an unsharded manager: it owns everything.
type Ownership struct {
	Plan  *Plan
	Shard Shard
	// Platform namespaces are in every shard's view (their Skills,
	// Templates, Extensions and instructions feed every Workspace); only
	// the shard whose ranges hold them writes there.
	Platform []string
	// lease is the shard's Lease as this process last renewed it; nil
	// (tests without leader election) counts as held.
	lease *TrackedLock
	// selectorKinds are the kinds whose lists and watches carry the
	// selector: those the API server shards (Probe).
	selectorKinds map[string]bool
}

// NewOwnership returns the view of shard name in plan.
func NewOwnership(plan *Plan, name string, platform []string) (*Ownership, error) {
	s, ok := plan.Shard(name)
	if !ok {
		return nil, fmt.Errorf("shard %q is not in the plan (%d shards)", name, len(plan.Shards))
	}
	return &Ownership{Plan: plan, Shard: s, Platform: platform}, nil
}

// Owns reports whether the namespace's Workspaces are this shard's.
func (o *Ownership) Owns(namespace string) bool {
	return o == nil || o.Shard.Holds(Hash(namespace))
}

// InView reports whether the namespace's objects belong in this shard's
// cache: its own namespaces and the platform namespaces.
func (o *Ownership) InView(namespace string) bool {
	return o.Owns(namespace) || slices.Contains(o.Platform, namespace)
}

// Leading reports whether this process holds its shard's Lease with time
// to spare: it renewed it less than the renew deadline ago, so no other
// candidate can have taken it over (that takes the full lease duration
// after the last renewal it saw).
func (o *Ownership) Leading(now time.Time) bool {
	return o == nil || o.lease == nil || o.lease.Fresh(now)
}

// MayWrite is the check before every write: the namespace is this
// shard's and this process holds the shard's Lease now. Cluster-scoped
// writes (namespace "") need the Lease only.
func (o *Ownership) MayWrite(namespace string) error {
	if o == nil {
		return nil
	}
	if namespace != "" && !o.Owns(namespace) {
		owner := o.Plan.Owner(namespace)
		shardWriteRefusals.WithLabelValues("ForeignNamespace").Inc()
		return fmt.Errorf("namespace %s belongs to shard %s, this process runs shard %s: %w", namespace, owner, o.Shard.Name, ErrNotOwned)
	}
	if !o.Leading(time.Now()) {
		shardWriteRefusals.WithLabelValues("LeaseNotHeld").Inc()
		return fmt.Errorf("shard %s: this process does not hold the shard's Lease: %w", o.Shard.Name, ErrNotOwned)
	}
	return nil
}
