package shard

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ConditionShardsCovered is the condition the shard leaders publish on their
// Leases: True when live Leases cover the whole hash space exactly once.
const ConditionShardsCovered = "ShardsCovered"

// Reasons of ConditionShardsCovered.
const (
	ReasonAllCovered = "AllRangesCovered"
	ReasonUncovered  = "RangesUncovered"
	ReasonOverlap    = "RangesOverlap"
)

// Coverage is how the live shard Leases cover the hash space.
type Coverage struct {
	// Uncovered and Overlap are shares of the hash space (0 to 1).
	Uncovered, Overlap float64
	// Gaps are the uncovered ranges.
	Gaps []Range
	// Live are the shards with a live leader, "planID/shard".
	Live []string
}

// Covered reports whether every hash has exactly one live leader.
func (c Coverage) Covered() bool { return c.Uncovered == 0 && c.Overlap == 0 }

// Condition is the ShardsCovered condition for c.
func (c Coverage) Condition() metav1.Condition {
	cond := metav1.Condition{Type: ConditionShardsCovered, Status: metav1.ConditionTrue, Reason: ReasonAllCovered,
		Message: "every namespace hash has exactly one live shard leader"}
	switch {
	case c.Uncovered > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonUncovered
		cond.Message = "no live shard Lease covers " + EncodeRanges(c.Gaps)
	case c.Overlap > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonOverlap
		cond.Message = "two plans' live Leases claim the same namespaces: a plan change is under way"
	}
	return cond
}

// Cover computes coverage from shard Leases: a Lease counts while it has a
// holder and its last renewal is younger than its duration. Its ranges are
// its ranges annotation, or, before its leader wrote that, its shard's
// ranges in plan when the Lease names plan's ID.
func Cover(leases []coordinationv1.Lease, plan *Plan, now time.Time) Coverage {
	var c Coverage
	var rs []Range
	for i := range leases {
		l := &leases[i]
		if !live(l, now) {
			continue
		}
		ranges, err := DecodeRanges(l.Annotations[AnnotationRanges])
		if l.Annotations[AnnotationRanges] == "" || err != nil {
			ranges = nil
			if plan != nil && l.Labels[LabelPlan] == plan.ID() {
				if s, ok := plan.Shard(l.Labels[LabelShard]); ok {
					ranges = s.Ranges
				}
			}
		}
		if len(ranges) > 0 {
			c.Live = append(c.Live, l.Labels[LabelPlan]+"/"+l.Labels[LabelShard])
		}
		rs = append(rs, ranges...)
	}
	sort.Strings(c.Live)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	// Sweep: next is the first hash not yet covered; done once the last
	// hash is covered.
	next, done := uint64(0), false
	for _, r := range rs {
		if done {
			c.Overlap += r.size()
			continue
		}
		if r.Start > next {
			c.Gaps = append(c.Gaps, Range{Start: next, Last: r.Start - 1})
		} else if r.Start < next {
			c.Overlap += float64(min(r.Last, next-1)-r.Start) + 1
		}
		if r.Last >= next || r.Start > next {
			if r.Last == math.MaxUint64 {
				done = true
			}
			next = max(next, r.Last+1)
		}
	}
	if !done {
		c.Gaps = append(c.Gaps, Range{Start: next, Last: math.MaxUint64})
	}
	for _, g := range c.Gaps {
		c.Uncovered += g.size()
	}
	c.Uncovered /= math.Exp2(64)
	c.Overlap /= math.Exp2(64)
	return c
}

func live(l *coordinationv1.Lease, now time.Time) bool {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}

// Watcher checks shard coverage from the Leases in one namespace, in every
// process (standbys included): it sets loadout_shard_uncovered_fraction and
// loadout_shard_overlap_fraction, and, while this process leads its shard,
// writes its ranges and the ShardsCovered condition on its Lease.
type Watcher struct {
	O         *Ownership
	Namespace string
	Leases    coordinationv1client.LeasesGetter
	Interval  time.Duration

	mu   sync.Mutex
	last Coverage
	seen bool
}

// NeedLeaderElection is false: standbys watch coverage too.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Start checks coverage every Interval until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	interval := w.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := w.Check(ctx); err != nil && ctx.Err() == nil {
			ctrl.LoggerFrom(ctx).Error(err, "Checking shard coverage failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Last returns the coverage of the last check, and whether there was one.
func (w *Watcher) Last() (Coverage, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, w.seen
}

// Check lists the shard Leases once and publishes what it finds.
func (w *Watcher) Check(ctx context.Context) error {
	list, err := w.Leases.Leases(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelPlan})
	if err != nil {
		return err
	}
	c := Cover(list.Items, w.O.Plan, time.Now())
	shardUncovered.Set(c.Uncovered)
	shardOverlap.Set(c.Overlap)
	w.mu.Lock()
	changed := !w.seen || w.last.Covered() != c.Covered()
	w.last, w.seen = c, true
	w.mu.Unlock()
	if changed {
		log := ctrl.LoggerFrom(ctx)
		if c.Covered() {
			log.Info("Shard ranges covered", "live", c.Live)
		} else {
			log.Info("Shard ranges not covered exactly once", "uncovered", c.Uncovered, "overlap", c.Overlap, "gaps", EncodeRanges(c.Gaps))
		}
	}
	if !w.O.Leading(time.Now()) || w.O.lease == nil {
		return nil
	}
	name := LeaseName(w.O.Plan, w.O.Shard.Name)
	for i := range list.Items {
		if list.Items[i].Name == name {
			return w.publish(ctx, &list.Items[i], c)
		}
	}
	return nil
}

// publish writes the shard's ranges and the condition on its own Lease when
// either differs from what the Lease carries.
func (w *Watcher) publish(ctx context.Context, l *coordinationv1.Lease, c Coverage) error {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != w.O.lease.Identity() {
		return nil
	}
	ranges := EncodeRanges(w.O.Shard.Ranges)
	cond := c.Condition()
	var old metav1.Condition
	_ = json.Unmarshal([]byte(l.Annotations[AnnotationCondition]), &old)
	if l.Annotations[AnnotationRanges] == ranges && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
		return nil
	}
	cond.LastTransitionTime = metav1.Now()
	if old.Status == cond.Status {
		cond.LastTransitionTime = old.LastTransitionTime
	}
	b, _ := json.Marshal(cond)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		AnnotationRanges: ranges, AnnotationCondition: string(b)}}})
	_, err := w.Leases.Leases(w.Namespace).Patch(ctx, l.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "loadout"})
	return err
}
