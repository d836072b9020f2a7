// Package promtext is hostd's metrics: counters, gauges and histograms with
// labels, a registry that serves them in the Prometheus text format, the Go
// runtime and process metrics as client_golang's default collectors name
// them, and the HTTP instrumentation hostd counts and times requests with.
// It replaces client_golang in the sidecar, where that library's packages
// (and their init, which builds the default registry's collectors) cost
// idle memory whether or not anything scrapes (docs/benchmarks.md). It
// serves the text format only (version 0.0.4), which every Prometheus
// accepts.
package promtext

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A Collector adds metric families to a scrape.
type Collector interface {
	collect(add func(f family))
}

// family is one metric family of a scrape: its name, help, type and
// samples, written by write (the sample lines, without HELP and TYPE).
type family struct {
	name, help, typ string
	write           func(w *bufio.Writer)
}

// Registry holds the collectors one /metrics serves.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{} }

// MustRegister adds collectors.
func (r *Registry) MustRegister(cs ...Collector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectors = append(r.collectors, cs...)
}

// ContentType is the text format's, as client_golang announces it.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// ServeHTTP writes every family, sorted by name, gzipped when the client
// accepts it.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	var fams []family
	for _, c := range cs {
		c.collect(func(f family) { fams = append(fams, f) })
	}
	slices.SortStableFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	w.Header().Set("Content-Type", ContentType)
	var out io.Writer = w
	if acceptsGzip(req.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer zw.Close()
		out = zw
	}
	bw := bufio.NewWriter(out)
	for _, f := range fams {
		// A bufio.Writer keeps its first error; Flush reports it.
		_, _ = bw.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n# TYPE " + f.name + " " + f.typ + "\n")
		f.write(bw)
	}
	_ = bw.Flush()
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(part), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// formatFloat writes a sample value as the text format does.
func formatFloat(f float64) string {
	switch {
	case f == 1:
		return "1"
	case f == 0:
		return "0"
	case f == -1:
		return "-1"
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// sample writes one sample line: name{labels} value.
func sample(w *bufio.Writer, name, labels string, v float64) {
	// A bufio.Writer keeps its first error; the registry's Flush reports it.
	_, _ = w.WriteString(name)
	if labels != "" {
		_, _ = w.WriteString("{" + labels + "}")
	}
	_, _ = w.WriteString(" " + formatFloat(v) + "\n")
}

// labelPairs renders names and values as the text format's label pairs,
// sorted by name.
func labelPairs(names, values []string) string {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	var b strings.Builder
	for n, i := range idx {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(names[i] + `="` + labelEscaper.Replace(values[i]) + `"`)
	}
	return b.String()
}

// joinLabels appends a pair to rendered pairs.
func joinLabels(pairs, extra string) string {
	if pairs == "" {
		return extra
	}
	return pairs + "," + extra
}

// value is a float64 updated atomically.
type value struct{ bits atomic.Uint64 }

func (v *value) add(d float64) {
	for {
		old := v.bits.Load()
		if v.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (v *value) set(f float64) { v.bits.Store(math.Float64bits(f)) }
func (v *value) get() float64  { return math.Float64frombits(v.bits.Load()) }

// Counter only goes up.
type Counter struct{ v value }

// Inc adds 1.
func (c *Counter) Inc() { c.v.add(1) }

// Add adds d, which must not be negative.
func (c *Counter) Add(d float64) {
	if d >= 0 {
		c.v.add(d)
	}
}

// Gauge is a value that is set.
type Gauge struct{ v value }

// Set sets the gauge.
func (g *Gauge) Set(f float64) { g.v.set(f) }

// Inc adds 1.
func (g *Gauge) Inc() { g.v.add(1) }

// Dec subtracts 1.
func (g *Gauge) Dec() { g.v.add(-1) }

// Add adds d.
func (g *Gauge) Add(d float64) { g.v.add(d) }

// vec is a family's children by label values.
type vec[T any] struct {
	name, help string
	labels     []string
	mu         sync.Mutex
	children   map[string]*child[T]
	make       func() *T
}

type child[T any] struct {
	pairs string
	m     *T
}

func newVec[T any](name, help string, labels []string, mk func() *T) *vec[T] {
	return &vec[T]{name: name, help: help, labels: labels, children: map[string]*child[T]{}, make: mk}
}

// with returns the child of values, made on first use; the number of
// values must be the number of labels.
func (v *vec[T]) with(values []string) *T {
	if len(values) != len(v.labels) {
		panic("promtext: " + v.name + ": " + strconv.Itoa(len(values)) + " label values for " + strconv.Itoa(len(v.labels)) + " labels")
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.children[key]
	if !ok {
		c = &child[T]{pairs: labelPairs(v.labels, values), m: v.make()}
		v.children[key] = c
	}
	return c.m
}

// sorted is the children in their label pairs' order.
func (v *vec[T]) sorted() []*child[T] {
	v.mu.Lock()
	out := make([]*child[T], 0, len(v.children))
	for _, c := range v.children {
		out = append(out, c)
	}
	v.mu.Unlock()
	slices.SortFunc(out, func(a, b *child[T]) int { return strings.Compare(a.pairs, b.pairs) })
	return out
}

// CounterVec is counters by label values.
type CounterVec struct{ v *vec[Counter] }

// NewCounter is a counter without labels.
func NewCounter(name, help string) *CounterVec { return NewCounterVec(name, help) }

// NewCounterVec is a family of counters labelled labels.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{newVec(name, help, labels, func() *Counter { return &Counter{} })}
}

// WithLabelValues is the counter of values, in the labels' order.
func (c *CounterVec) WithLabelValues(values ...string) *Counter { return c.v.with(values) }

// Inc adds 1 to the counter without labels.
func (c *CounterVec) Inc() { c.v.with(nil).Inc() }

// Add adds d to the counter without labels.
func (c *CounterVec) Add(d float64) { c.v.with(nil).Add(d) }

func (c *CounterVec) collect(add func(family)) {
	children := c.v.sorted()
	if len(c.v.labels) == 0 && len(children) == 0 {
		children = []*child[Counter]{{m: c.v.with(nil)}}
	}
	if len(children) == 0 {
		return // a family without samples is left out, as client_golang does
	}
	add(family{name: c.v.name, help: c.v.help, typ: "counter", write: func(w *bufio.Writer) {
		for _, ch := range children {
			sample(w, c.v.name, ch.pairs, ch.m.v.get())
		}
	}})
}

// GaugeVec is gauges by label values.
type GaugeVec struct{ v *vec[Gauge] }

// NewGauge is a gauge without labels.
func NewGauge(name, help string) *GaugeVec { return NewGaugeVec(name, help) }

// NewGaugeVec is a family of gauges labelled labels.
func NewGaugeVec(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{newVec(name, help, labels, func() *Gauge { return &Gauge{} })}
}

// WithLabelValues is the gauge of values, in the labels' order.
func (g *GaugeVec) WithLabelValues(values ...string) *Gauge { return g.v.with(values) }

// Set sets the gauge without labels.
func (g *GaugeVec) Set(f float64) { g.v.with(nil).Set(f) }

// Inc and Dec move the gauge without labels.
func (g *GaugeVec) Inc() { g.v.with(nil).Inc() }
func (g *GaugeVec) Dec() { g.v.with(nil).Dec() }

// Reset forgets every child.
func (g *GaugeVec) Reset() {
	g.v.mu.Lock()
	defer g.v.mu.Unlock()
	clear(g.v.children)
}

func (g *GaugeVec) collect(add func(family)) {
	children := g.v.sorted()
	if len(g.v.labels) == 0 && len(children) == 0 {
		children = []*child[Gauge]{{m: g.v.with(nil)}}
	}
	if len(children) == 0 {
		return
	}
	add(family{name: g.v.name, help: g.v.help, typ: "gauge", write: func(w *bufio.Writer) {
		for _, ch := range children {
			sample(w, g.v.name, ch.pairs, ch.m.v.get())
		}
	}})
}

// Histogram counts observations into cumulative buckets.
type Histogram struct {
	upper  []float64
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    value
	count  atomic.Uint64
}

// Observe records v.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.upper, v)
	h.counts[i].Add(1)
	h.sum.add(v)
	h.count.Add(1)
}

// HistogramVec is histograms by label values.
type HistogramVec struct {
	v       *vec[Histogram]
	buckets []float64
}

// NewHistogramVec is a family of histograms labelled labels with the
// upper bounds buckets (sorted; +Inf is added).
func NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	b := slices.Clone(buckets)
	slices.Sort(b)
	return &HistogramVec{buckets: b, v: newVec(name, help, labels, func() *Histogram {
		return &Histogram{upper: b, counts: make([]atomic.Uint64, len(b)+1)}
	})}
}

// WithLabelValues is the histogram of values, in the labels' order.
func (h *HistogramVec) WithLabelValues(values ...string) *Histogram { return h.v.with(values) }

func (h *HistogramVec) collect(add func(family)) {
	children := h.v.sorted()
	if len(children) == 0 {
		return
	}
	add(family{name: h.v.name, help: h.v.help, typ: "histogram", write: func(w *bufio.Writer) {
		for _, ch := range children {
			var cum uint64
			for i, upper := range ch.m.upper {
				cum += ch.m.counts[i].Load()
				sample(w, h.v.name+"_bucket", joinLabels(ch.pairs, `le="`+formatFloat(upper)+`"`), float64(cum))
			}
			cum += ch.m.counts[len(ch.m.upper)].Load()
			sample(w, h.v.name+"_bucket", joinLabels(ch.pairs, `le="+Inf"`), float64(cum))
			sample(w, h.v.name+"_sum", ch.pairs, ch.m.sum.get())
			sample(w, h.v.name+"_count", ch.pairs, float64(ch.m.count.Load()))
		}
	}})
}

// CounterFunc is a counter read from f at each scrape.
type CounterFunc struct {
	name, help string
	f          func() float64
}

// NewCounterFunc is a counter whose value f returns.
func NewCounterFunc(name, help string, f func() float64) *CounterFunc {
	return &CounterFunc{name: name, help: help, f: f}
}

func (c *CounterFunc) collect(add func(family)) {
	v := c.f()
	add(family{name: c.name, help: c.help, typ: "counter", write: func(w *bufio.Writer) { sample(w, c.name, "", v) }})
}

// gaugeFamily and counterFamily are families of one sample.
func gaugeFamily(name, help string, v float64) family {
	return family{name: name, help: help, typ: "gauge", write: func(w *bufio.Writer) { sample(w, name, "", v) }}
}

func counterFamily(name, help string, v float64) family {
	return family{name: name, help: help, typ: "counter", write: func(w *bufio.Writer) { sample(w, name, "", v) }}
}
