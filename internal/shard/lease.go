package shard

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease labels and annotation. Every shard's Lease carries them, so any
// process can tell which ranges are covered from the Leases alone.
const (
	// LabelPlan is the plan ID (Plan.ID) on each shard Lease.
	LabelPlan = "loadout.dev/shard-plan"
	// LabelShard is the shard name on its Lease.
	LabelShard = "loadout.dev/shard"
	// AnnotationRanges lists the shard's ranges (EncodeRanges).
	AnnotationRanges = "loadout.dev/shard-ranges"
	// AnnotationCondition holds the ShardsCovered condition as JSON,
	// written by each shard's leader when it changes.
	AnnotationCondition = "loadout.dev/shards-covered"
)

// LeaseName is the name of a shard's Lease: the plan ID is in it, so a
// changed plan never shares a Lease with the old one.
func LeaseName(plan *Plan, shard string) string {
	return "loadout-shard-" + plan.ID() + "-" + shard
}

// TrackedLock is a Lease lock that remembers when this process last
// renewed it: the start of its last successful write of a record naming
// itself. Another candidate can take the Lease only a full lease duration
// after the last renewal it observed, which is never before that start.
type TrackedLock struct {
	resourcelock.Interface
	// RenewDeadline is how long after a renewal this process still counts
	// as leading; below the lease duration, so writes stop before another
	// process can take over.
	RenewDeadline time.Duration

	mu      sync.Mutex
	renewed time.Time
}

// NewLeaseLock returns the tracked Lease lock of o's shard in namespace.
// The Lease carries the plan and shard labels; the leader adds its ranges
// (Publisher).
func NewLeaseLock(o *Ownership, namespace, identity string, c coordinationv1client.LeasesGetter, renewDeadline time.Duration) *TrackedLock {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: LeaseName(o.Plan, o.Shard.Name)},
		Client:     c,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		Labels:     map[string]string{LabelPlan: o.Plan.ID(), LabelShard: o.Shard.Name},
	}
	t := &TrackedLock{Interface: lock, RenewDeadline: renewDeadline}
	o.lease = t
	return t
}

// Create records a successful acquisition.
func (t *TrackedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	start := time.Now()
	err := t.Interface.Create(ctx, ler)
	t.record(start, ler, err)
	return err
}

// Update records a successful renewal, or the release of the Lease.
func (t *TrackedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	start := time.Now()
	err := t.Interface.Update(ctx, ler)
	t.record(start, ler, err)
	return err
}

func (t *TrackedLock) record(start time.Time, ler resourcelock.LeaderElectionRecord, err error) {
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ler.HolderIdentity == t.Identity() {
		t.renewed = start
	} else {
		t.renewed = time.Time{} // released
	}
}

// Fresh reports whether the last renewal is less than RenewDeadline old.
func (t *TrackedLock) Fresh(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.renewed.IsZero() && now.Sub(t.renewed) < t.RenewDeadline
}

// Expire forgets the last renewal, as if the process had paused past its
// renew deadline (tests).
func (t *TrackedLock) Expire() {
	t.mu.Lock()
	t.renewed = time.Time{}
	t.mu.Unlock()
}
