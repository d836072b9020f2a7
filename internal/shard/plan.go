package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
	"sigs.k8s.io/yaml"
)

// KeyNamespace is the field the API server's shard selector hashes for
// namespaced objects (KEP-5866).
const KeyNamespace = "object.metadata.namespace"

// hashEnd is the exclusive upper bound of the hash space (2^64) in the
// API server's notation.
const hashEnd = "0x10000000000000000"

// Hash is the 64-bit FNV-1a hash of a namespace name: the same function the
// API server's shardRange() applies (k8s.io/apimachinery/pkg/sharding).
func Hash(namespace string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(namespace))
	return h.Sum64()
}

// Range is a half-open interval [Start, End) of the hash space. End is
// stored as its last member (Last = End-1) so the full space fits in uint64.
type Range struct {
	Start, Last uint64
}

// Contains reports whether h falls in the range.
func (r Range) Contains(h uint64) bool { return h >= r.Start && h <= r.Last }

// StartHex and EndHex are the bounds in the API server's notation:
// 0x-prefixed, 16 lowercase hex digits, and 0x10000000000000000 for 2^64.
func (r Range) StartHex() string { return fmt.Sprintf("0x%016x", r.Start) }

// EndHex is the exclusive upper bound; see StartHex.
func (r Range) EndHex() string {
	if r.Last == math.MaxUint64 {
		return hashEnd
	}
	return fmt.Sprintf("0x%016x", r.Last+1)
}

// String is "[start, end)".
func (r Range) String() string { return "[" + r.StartHex() + ", " + r.EndHex() + ")" }

// size is the number of hashes in the range, as a float (2^64 does not fit).
func (r Range) size() float64 { return float64(r.Last-r.Start) + 1 }

// MarshalJSON writes {"start": "0x…", "end": "0x…"}.
func (r Range) MarshalJSON() ([]byte, error) {
	return json.Marshal(rangeJSON{Start: r.StartHex(), End: r.EndHex()})
}

// UnmarshalJSON reads {"start": "0x…", "end": "0x…"}, end exclusive.
func (r *Range) UnmarshalJSON(b []byte) error {
	var j rangeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	start, err := parseBound(j.Start)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	end, err := parseBound(j.End)
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	if end.Cmp(start) <= 0 {
		return fmt.Errorf("range %s..%s is empty: end must be above start", j.Start, j.End)
	}
	if !start.IsUint64() {
		return fmt.Errorf("start %s is beyond the hash space", j.Start)
	}
	last := new(big.Int).Sub(end, big.NewInt(1))
	if !last.IsUint64() {
		return fmt.Errorf("end %s is beyond the hash space (at most %s)", j.End, hashEnd)
	}
	r.Start, r.Last = start.Uint64(), last.Uint64()
	return nil
}

type rangeJSON struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

func parseBound(s string) (*big.Int, error) {
	hexDigits, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	if !ok || hexDigits == "" {
		return nil, fmt.Errorf("%q: want a 0x-prefixed hex number", s)
	}
	n, ok := new(big.Int).SetString(hexDigits, 16)
	if !ok {
		return nil, fmt.Errorf("%q: want a 0x-prefixed hex number", s)
	}
	return n, nil
}

// Shard is one manager Deployment's slice: a name and its ranges.
type Shard struct {
	// Name is a DNS label; the Lease and the chart's Deployment carry it.
	Name   string  `json:"name"`
	Ranges []Range `json:"ranges"`
}

// Plan splits the whole hash space between shards: every hash belongs to
// exactly one range of exactly one shard (Validate).
type Plan struct {
	Shards []Shard `json:"shards"`
}

// ParsePlan reads a plan in YAML or JSON and validates it.
func ParsePlan(b []byte) (*Plan, error) {
	var p Plan
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("parsing shard plan: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks that shard names are unique DNS labels and that the
// ranges tile the hash space: no gap, no overlap.
func (p *Plan) Validate() error {
	if len(p.Shards) == 0 {
		return errors.New("shard plan has no shards")
	}
	type owned struct {
		r     Range
		shard string
	}
	var all []owned
	seen := map[string]bool{}
	for _, s := range p.Shards {
		if !isDNSLabel(s.Name) || len(s.Name) > 30 {
			return fmt.Errorf("shard name %q: want a DNS label of at most 30 characters", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("shard %q named twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Ranges) == 0 {
			return fmt.Errorf("shard %q has no ranges", s.Name)
		}
		for _, r := range s.Ranges {
			all = append(all, owned{r, s.Name})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].r.Start < all[j].r.Start })
	next := uint64(0)
	for i, o := range all {
		switch {
		case o.r.Start > next:
			return fmt.Errorf("shard plan leaves [0x%016x, %s) to no shard", next, o.r.StartHex())
		case o.r.Start < next || (i > 0 && all[i-1].r.Last == math.MaxUint64):
			return fmt.Errorf("shard plan gives %s to both %q and %q", o.r, all[i-1].shard, o.shard)
		}
		next = o.r.Last + 1 // wraps to 0 after the last range
		if o.r.Last == math.MaxUint64 && i != len(all)-1 {
			return fmt.Errorf("shard plan gives %s to both %q and %q", all[i+1].r, o.shard, all[i+1].shard)
		}
	}
	if all[len(all)-1].r.Last != math.MaxUint64 {
		return fmt.Errorf("shard plan leaves [0x%016x, %s) to no shard", next, hashEnd)
	}
	return nil
}

func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ID names the plan by its content: the first 10 hex digits of the SHA-256
// of its canonical JSON. Leases carry it, so a changed plan never shares a
// Lease with the old one.
func (p *Plan) ID() string {
	b, _ := json.Marshal(p) // plain strings and numbers always marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:5])
}

// Shard returns the named shard.
func (p *Plan) Shard(name string) (Shard, bool) {
	for _, s := range p.Shards {
		if s.Name == name {
			return s, true
		}
	}
	return Shard{}, false
}

// Owner returns the name of the shard whose ranges hold the namespace's hash.
func (p *Plan) Owner(namespace string) string {
	h := Hash(namespace)
	for _, s := range p.Shards {
		if s.Holds(h) {
			return s.Name
		}
	}
	return "" // only for a plan that failed Validate
}

// Holds reports whether one of the shard's ranges holds h.
func (s Shard) Holds(h uint64) bool {
	for _, r := range s.Ranges {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

// Fraction is the share of the hash space the shard holds.
func (s Shard) Fraction() float64 {
	var n float64
	for _, r := range s.Ranges {
		n += r.size()
	}
	return n / math.Exp2(64)
}

// Selector is the API server's shard selector (KEP-5866) for the shard's
// ranges plus, for each extra namespace (the platform namespaces every
// shard must see), the one-hash range of its name. A foreign namespace
// whose hash collides with a platform namespace's passes the selector; the
// client-side filter drops it.
func (s Shard) Selector(extra ...string) string {
	reqs := make([]sharding.ShardRangeRequirement, 0, len(s.Ranges)+len(extra))
	for _, r := range s.Ranges {
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: KeyNamespace, Start: r.StartHex(), End: r.EndHex()})
	}
	for _, ns := range extra {
		h := Hash(ns)
		if s.Holds(h) {
			continue
		}
		r := Range{Start: h, Last: h}
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: KeyNamespace, Start: r.StartHex(), End: r.EndHex()})
	}
	return sharding.NewSelector(reqs...).String()
}

// EncodeRanges is the compact form of ranges a Lease carries:
// "start-end,start-end" in hex, end exclusive.
func EncodeRanges(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.StartHex() + "-" + r.EndHex()
	}
	return strings.Join(parts, ",")
}

// DecodeRanges reads EncodeRanges' form.
func DecodeRanges(s string) ([]Range, error) {
	var out []Range
	for _, part := range strings.Split(s, ",") {
		start, end, ok := strings.Cut(part, "-")
		if !ok {
			return nil, fmt.Errorf("range %q: want start-end", part)
		}
		var r Range
		if err := r.UnmarshalJSON([]byte(`{"start":` + strconv.Quote(start) + `,"end":` + strconv.Quote(end) + `}`)); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// EvenPlan splits the hash space into n equal ranges, shards named "0"…"n-1".
func EvenPlan(n int) *Plan {
	p := &Plan{}
	step := math.MaxUint64/uint64(n) + 1
	for i := range n {
		r := Range{Start: uint64(i) * step, Last: uint64(i+1)*step - 1}
		if i == n-1 {
			r.Last = math.MaxUint64
		}
		p.Shards = append(p.Shards, Shard{Name: strconv.Itoa(i), Ranges: []Range{r}})
	}
	return p
}

// WeightedPlan splits the hash space so that each of n shards holds close
// to an n-th of the total weight of the given namespaces (weight: their
// Workspaces, at least 1). Boundaries fall between the hashes of real names,
// so sequential names that cluster in the hash space still split evenly. It
// takes the better of one contiguous range a shard and 4n segments dealt to
// the shards (several ranges a shard), so a whale namespace gets a shard of
// its own. A namespace is never split: one heavier than an n-th of the
// total makes its shard the heaviest.
func WeightedPlan(weights map[string]int, n int) *Plan {
	if n <= 1 || len(weights) < n {
		return EvenPlan(max(n, 1))
	}
	pts := make([]weightedPoint, 0, len(weights))
	total := 0
	for ns, w := range weights {
		w = max(w, 1)
		pts = append(pts, weightedPoint{Hash(ns), w})
		total += w
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].h < pts[j].h })
	// Cut the points into m = 4n contiguous segments as even as contiguity
	// allows (the smallest load L that m runs can keep under: binary search
	// over L, greedy packing), then deal the segments to the shards heaviest
	// first, each to the lightest shard. A whale namespace then gets a shard
	// to itself, and the namespaces around it go to the others, which may
	// hold more than one range.
	best := dealt(pts, n, evenCuts(pts, total, n)) // contiguous: one range a shard
	// Finer segments deal more evenly. The even cuts of 4n segments are
	// only as fine as the heaviest namespace allows (a whale of 40% makes
	// every segment up to 40%), so the last candidate cuts at a 16n-th of
	// the total and lets a heavier namespace be a segment of its own.
	for _, cuts := range [][]int{evenCuts(pts, total, min(len(pts), 4*n)), cutsUnder(pts, max(1, total/(16*n)))} {
		if alt := dealt(pts, n, cuts); evener(alt.Loads(weights), best.Loads(weights)) {
			best = alt
		}
	}
	return best
}

// evener reports whether loads a spread the weight better than b: a lighter
// heaviest shard first (Imbalance), then, where a whale namespace fixes the
// heaviest shard for every plan, a lighter second heaviest, and so on. So a
// fleet with a tenant of 40% gets 600/450/450 rather than 600/594/306: the
// same heaviest/mean, but the shards the whale does not fix share the rest.
func evener(a, b []Load) bool {
	weights := func(loads []Load) []int {
		w := make([]int, len(loads))
		for i, l := range loads {
			w[i] = l.Weight
		}
		sort.Sort(sort.Reverse(sort.IntSlice(w)))
		return w
	}
	return slices.Compare(weights(a), weights(b)) < 0
}

type weightedPoint struct {
	h uint64
	w int
}

// cutsUnder cuts pts (sorted by hash) greedily into contiguous segments of at
// most limit weight each, a point heavier than limit alone in its own: the
// indexes where segments start, the first aside.
func cutsUnder(pts []weightedPoint, limit int) []int {
	var cuts []int
	acc := 0
	for i, pt := range pts {
		if i > 0 && acc+pt.w > limit {
			cuts = append(cuts, i)
			acc = 0
		}
		acc += pt.w
	}
	return cuts
}

// evenCuts cuts pts (sorted by hash) into m contiguous segments as even as
// contiguity allows: the smallest load that m runs can keep under (binary
// search, greedy packing).
func evenCuts(pts []weightedPoint, total, m int) []int {
	cutsFor := func(limit int) []int {
		var cuts []int
		acc := 0
		for i, pt := range pts {
			k := len(cuts) + 1                    // segments started so far
			mustCut := k < m && len(pts)-i == m-k // as many points left as segments to fill
			if i > 0 && k < m && (acc+pt.w > limit || mustCut) {
				cuts = append(cuts, i)
				acc = 0
			}
			acc += pt.w
		}
		return cuts
	}
	fits := func(limit int) bool {
		parts, acc := 1, 0
		for _, pt := range pts {
			if acc+pt.w > limit {
				parts, acc = parts+1, 0
			}
			acc += pt.w
		}
		return parts <= m
	}
	lo, hi := 0, total
	for _, pt := range pts {
		lo = max(lo, pt.w)
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return cutsFor(lo)
}

// dealt cuts pts (sorted by hash) at cuts and deals the segments to n
// shards, heaviest first, each to the lightest shard.
func dealt(pts []weightedPoint, n int, cuts []int) *Plan {
	type segment struct {
		r Range
		w int
	}
	var segs []segment
	first, start := 0, uint64(0)
	for k := range len(cuts) + 1 {
		end, last := len(pts), uint64(math.MaxUint64)
		if k < len(cuts) {
			end = cuts[k]
			// Midway between the last hash of this segment and the first of
			// the next, so a new namespace near the boundary lands evenly.
			a, b := pts[end-1].h, pts[end].h
			last = a + (b-a)/2
		}
		w := 0
		for _, pt := range pts[first:end] {
			w += pt.w
		}
		segs = append(segs, segment{Range{Start: start, Last: last}, w})
		first, start = end, last+1
	}
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return segs[order[a]].w > segs[order[b]].w })
	loads := make([]int, n)
	owner := make([]int, len(segs))
	for _, i := range order {
		lightest := 0
		for k := range loads {
			if loads[k] < loads[lightest] {
				lightest = k
			}
		}
		owner[i] = lightest
		loads[lightest] += segs[i].w
	}
	p := &Plan{}
	for k := range n {
		sh := Shard{Name: strconv.Itoa(k)}
		for i, seg := range segs { // in hash order: adjacent segments merge
			if owner[i] != k {
				continue
			}
			if l := len(sh.Ranges); l > 0 && sh.Ranges[l-1].Last+1 == seg.r.Start {
				sh.Ranges[l-1].Last = seg.r.Last
				continue
			}
			sh.Ranges = append(sh.Ranges, seg.r)
		}
		p.Shards = append(p.Shards, sh)
	}
	return p
}

// Load is how a set of weighted namespaces falls on a plan's shards.
type Load struct {
	Shard      string
	Namespaces int
	Weight     int
}

// Loads returns each shard's share of the weighted namespaces, in plan order.
func (p *Plan) Loads(weights map[string]int) []Load {
	idx := map[string]int{}
	out := make([]Load, len(p.Shards))
	for i, s := range p.Shards {
		idx[s.Name] = i
		out[i].Shard = s.Name
	}
	for ns, w := range weights {
		i := idx[p.Owner(ns)]
		out[i].Namespaces++
		out[i].Weight += max(w, 1)
	}
	return out
}

// Imbalance is the heaviest shard's weight over the mean (1 is perfect).
func Imbalance(loads []Load) float64 {
	total, heaviest := 0, 0
	for _, l := range loads {
		total += l.Weight
		heaviest = max(heaviest, l.Weight)
	}
	if total == 0 {
		return 1
	}
	return float64(heaviest) * float64(len(loads)) / float64(total)
}

// YAML writes the plan as YAML with every bound quoted (an unquoted
// 0x10000000000000000 would be read back as a number).
func (p *Plan) YAML() []byte {
	var b strings.Builder
	b.WriteString("shards:\n")
	for _, s := range p.Shards {
		fmt.Fprintf(&b, "- name: %q\n  ranges:\n", s.Name)
		for _, r := range s.Ranges {
			fmt.Fprintf(&b, "  - {start: %q, end: %q}\n", r.StartHex(), r.EndHex())
		}
	}
	return []byte(b.String())
}
