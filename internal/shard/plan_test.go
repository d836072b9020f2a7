package shard

import (
	"fmt"
	"math"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/utils/ptr"
)

func TestPlan_EvenAndWeightedPlansTileTheHashSpace(t *testing.T) {
	for n := 1; n <= 7; n++ {
		if err := EvenPlan(n).Validate(); err != nil {
			t.Errorf("EvenPlan(%d): %v", n, err)
		}
		if err := WeightedPlan(sequential("tenant-", 500, 3), n).Validate(); err != nil {
			t.Errorf("WeightedPlan(%d): %v", n, err)
		}
	}
}

func TestPlan_ValidateRefusesGapsOverlapsAndBadNames(t *testing.T) {
	for name, yaml := range map[string]string{
		"gap":       "shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x10'}]\n- name: b\n  ranges: [{start: '0x11', end: '0x10000000000000000'}]\n",
		"overlap":   "shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x20'}]\n- name: b\n  ranges: [{start: '0x10', end: '0x10000000000000000'}]\n",
		"short":     "shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x20'}]\n",
		"empty":     "shards:\n- name: a\n  ranges: [{start: '0x20', end: '0x20'}]\n",
		"beyond":    "shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x10000000000000001'}]\n",
		"name":      "shards:\n- name: A_1\n  ranges: [{start: '0x0', end: '0x10000000000000000'}]\n",
		"duplicate": "shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x10'}]\n- name: a\n  ranges: [{start: '0x10', end: '0x10000000000000000'}]\n",
		"unknown":   "shards:\n- name: a\n  range: [{start: '0x0', end: '0x10000000000000000'}]\n",
	} {
		if _, err := ParsePlan([]byte(yaml)); err == nil {
			t.Errorf("%s: plan accepted", name)
		}
	}
	p, err := ParsePlan([]byte("shards:\n- name: a\n  ranges: [{start: '0x0', end: '0x8000000000000000'}]\n- name: b\n  ranges: [{start: '0x8000000000000000', end: '0x10000000000000000'}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID() == EvenPlan(3).ID() || p.ID() != EvenPlan(2).ID() && len(p.ID()) != 10 {
		t.Errorf("plan IDs: %s vs %s", p.ID(), EvenPlan(3).ID())
	}
}

// The API server decides with k8s.io/apimachinery/pkg/sharding; a shard's
// ownership must agree with its selector exactly, or the cache would hold
// a namespace the ownership check refuses (or miss one it owns).
func TestShard_OwnershipAgreesWithTheAPIServersSelector(t *testing.T) {
	plan := WeightedPlan(sequential("team-", 300, 1), 3)
	for _, s := range plan.Shards {
		reqs := []sharding.ShardRangeRequirement{}
		for _, r := range s.Ranges {
			reqs = append(reqs, sharding.ShardRangeRequirement{Key: KeyNamespace, Start: r.StartHex(), End: r.EndHex()})
		}
		sel := sharding.NewSelector(reqs...)
		if sel.String() != s.Selector() {
			t.Fatalf("selector %q, want %q", s.Selector(), sel.String())
		}
		for ns := range sequential("other-", 2000, 1) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}}
			got, err := sel.Matches(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != s.Holds(Hash(ns)) {
				t.Fatalf("shard %s, namespace %s: selector %v, Holds %v", s.Name, ns, got, !got)
			}
		}
	}
}

func TestShard_SelectorAddsThePlatformNamespacesHash(t *testing.T) {
	plan := EvenPlan(3)
	platform := "loadout-system"
	for _, s := range plan.Shards {
		sel := s.Selector(platform)
		if s.Holds(Hash(platform)) != (sel == s.Selector()) {
			t.Errorf("shard %s: %s", s.Name, sel)
		}
		o := &Ownership{Plan: plan, Shard: s, Platform: []string{platform}}
		if !o.InView(platform) {
			t.Errorf("shard %s does not see the platform namespace", s.Name)
		}
	}
}

// Sequential names are what tenants create; measure how an even split and
// a weighted plan spread them (docs/operations.md quotes this).
func TestWeightedPlan_BalancesSequentialNamesBetterThanAnEvenSplit(t *testing.T) {
	for _, n := range []int{2, 3, 8} {
		for _, c := range []struct {
			name    string
			weights map[string]int
		}{
			{"2000 tenant-NNNN x4", sequential("tenant-", 2000, 4)},
			{"200 ns-N x1", sequential("ns-", 200, 1)},
		} {
			even := Imbalance(EvenPlan(n).Loads(c.weights))
			weighted := Imbalance(WeightedPlan(c.weights, n).Loads(c.weights))
			t.Logf("%d shards, %s: heaviest/mean even %.3f, weighted %.3f", n, c.name, even, weighted)
			if weighted > 1+float64(n)*5/float64(len(c.weights)) {
				t.Errorf("%d shards, %s: weighted plan imbalance %.3f", n, c.name, weighted)
			}
		}
	}
	whale := sequential("tenant-", 2000, 4)
	whale["whale"] = 4000
	loads := WeightedPlan(whale, 3).Loads(whale)
	t.Logf("with a 4000-Workspace namespace: %+v", loads)
	if Imbalance(loads) > 1.05 {
		t.Errorf("a whale of a third of the weight: heaviest/mean %.3f, want its own shard", Imbalance(loads))
	}
}

func TestCover_GapsAndOverlapsFromLiveLeases(t *testing.T) {
	plan := EvenPlan(3)
	now := time.Now()
	lease := func(shard string, renewed time.Duration, annotation string) coordinationv1.Lease {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelPlan: plan.ID(), LabelShard: shard}}}
		if annotation != "" {
			l.Annotations = map[string]string{AnnotationRanges: annotation}
		}
		l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To("p"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)}}
		return l
	}
	all := []coordinationv1.Lease{lease("0", 0, ""), lease("1", time.Second, ""), lease("2", 0, "")}
	if c := Cover(all, plan, now); !c.Covered() || len(c.Live) != 3 {
		t.Errorf("all live: %+v", c)
	}
	all[1] = lease("1", 20*time.Second, "") // expired
	c := Cover(all, plan, now)
	if c.Covered() || math.Abs(c.Uncovered-1.0/3) > 1e-9 || len(c.Gaps) != 1 || c.Gaps[0] != plan.Shards[1].Ranges[0] {
		t.Errorf("one expired: %+v", c)
	}
	if cond := c.Condition(); cond.Status != metav1.ConditionFalse || cond.Reason != ReasonUncovered {
		t.Errorf("condition %+v", cond)
	}
	// A new plan's shard 0 claims everything while the old plan still lives.
	all[1] = lease("1", 0, "")
	all = append(all, lease("x", 0, EncodeRanges(EvenPlan(1).Shards[0].Ranges)))
	if c := Cover(all, plan, now); c.Uncovered != 0 || math.Abs(c.Overlap-1) > 1e-9 {
		t.Errorf("overlap: %+v", c)
	}
	if c := Cover(nil, plan, now); c.Uncovered != 1 {
		t.Errorf("no leases: %+v", c)
	}
}

func TestRanges_EncodeDecodeRoundTrip(t *testing.T) {
	rs := WeightedPlan(sequential("a-", 50, 1), 4).Shards[2].Ranges
	rs = append(rs, EvenPlan(2).Shards[1].Ranges...)
	got, err := DecodeRanges(EncodeRanges(rs))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(rs) {
		t.Errorf("round trip: %v, %v", got, err)
	}
}

func sequential(prefix string, n, weight int) map[string]int {
	m := make(map[string]int, n)
	for i := range n {
		m[fmt.Sprintf("%s%04d", prefix, i)] = weight
	}
	return m
}

func TestPlan_YAMLRoundTrip(t *testing.T) {
	p := WeightedPlan(sequential("ns-", 100, 2), 3)
	got, err := ParsePlan(p.YAML())
	if err != nil || got.ID() != p.ID() {
		t.Fatalf("round trip: %v\n%s", err, p.YAML())
	}
}

// A tenant with 40% of a 1,500-Workspace fleet fixes the heaviest shard of
// any 3-shard plan at 600 (heaviest/mean 1.2). The planner then prefers
// the plan whose other shards share the rest evenly, not the first one it
// found with the same heaviest shard (600/594/306).
func TestWeightedPlan_WhaleTenantLeavesTheRestEvenlySpread(t *testing.T) {
	weights := sequential("tenant-", 119, 1)
	left := 900
	for ns := range weights { // 119 small tenants share 900 Workspaces
		weights[ns] = 900 / 119
		left -= 900 / 119
	}
	weights["tenant-0000"] += left
	weights["whale"] = 600
	loads := WeightedPlan(weights, 3).Loads(weights)
	t.Logf("1,500 Workspaces, a 40%% tenant, 3 shards: %+v", loads)
	var rest []int
	for _, l := range loads {
		if l.Weight != 600 || l.Namespaces != 1 {
			rest = append(rest, l.Weight)
		}
	}
	if len(rest) != 2 {
		t.Fatalf("the whale has no shard of its own: %+v", loads)
	}
	if d := rest[0] - rest[1]; d > 60 || d < -60 {
		t.Errorf("the shards beside the whale hold %v Workspaces: want them within 60 of each other", rest)
	}
}
