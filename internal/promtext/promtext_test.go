package promtext

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func scrape(t *testing.T, r *Registry, gz bool) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip, deflate")
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if got := rec.Header().Get("Content-Type"); got != ContentType {
		t.Errorf("content type %q", got)
	}
	var body io.Reader = rec.Body
	if gz {
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatal("not gzipped though accepted")
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The text format as client_golang writes it: families sorted by name,
// HELP escaped, label pairs sorted by name and their values escaped,
// children sorted, histograms cumulative with +Inf, _sum and _count,
// families without samples left out, floats as Go's shortest 'g'.
func TestRegistry_WritesTheTextFormatAsClientGolang(t *testing.T) {
	r := NewRegistry()
	c := NewCounterVec("x_total", "X \\ with \"q\"\nnl.", "b", "a")
	c.WithLabelValues("1", "v\"\\\n").Inc()
	c.WithLabelValues("0", "z").Add(2)
	h := NewHistogramVec("h_seconds", "H.", []float64{1, 0.0001, 0.5}, "e")
	h.WithLabelValues("z").Observe(0.3)
	h.WithLabelValues("z").Observe(0.5)
	g := NewGauge("g", "G.")
	g.Set(1e21)
	empty := NewGaugeVec("empty", "No samples.", "l")
	r.MustRegister(c, h, g, empty, NewCounterFunc("f_total", "F.", func() float64 { return 3 }))
	want := `# HELP f_total F.
# TYPE f_total counter
f_total 3
# HELP g G.
# TYPE g gauge
g 1e+21
# HELP h_seconds H.
# TYPE h_seconds histogram
h_seconds_bucket{e="z",le="0.0001"} 0
h_seconds_bucket{e="z",le="0.5"} 2
h_seconds_bucket{e="z",le="1"} 2
h_seconds_bucket{e="z",le="+Inf"} 2
h_seconds_sum{e="z"} 0.8
h_seconds_count{e="z"} 2
# HELP x_total X \\ with "q"\nnl.
# TYPE x_total counter
x_total{a="v\"\\\n",b="1"} 1
x_total{a="z",b="0"} 2
`
	for _, gz := range []bool{false, true} {
		if got := scrape(t, r, gz); got != want {
			t.Errorf("gzip=%v:\n%s\nwant:\n%s", gz, got, want)
		}
	}
}

// The Go runtime and process families carry client_golang's names, so
// dashboards over hostd read the same series.
func TestCollectors_NameTheSeriesClientGolangNamed(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(GoCollector{}, ProcessCollector{})
	got := scrape(t, r, false)
	for _, name := range []string{"go_gc_duration_seconds{quantile=\"0.5\"}", "go_gc_duration_seconds_count", "go_goroutines", "go_threads",
		"go_info{version=", "go_memstats_alloc_bytes ", "go_memstats_heap_objects", "go_memstats_sys_bytes", "go_gc_gogc_percent",
		"go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads", "process_cpu_seconds_total", "process_resident_memory_bytes",
		"process_start_time_seconds", "process_open_fds", "process_max_fds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
		"process_network_receive_bytes_total", "# TYPE go_memstats_mallocs_total counter", "# TYPE go_gc_duration_seconds summary"} {
		if !strings.Contains(got, "\n"+name) {
			t.Errorf("no %s in\n%s", name, got)
		}
	}
}

// A request is counted with its status code (200 when the handler wrote
// none) and timed; the writer keeps the Flusher a streaming answer needs.
func TestInstrumentHandler_CountsByCodeAndKeepsTheFlusher(t *testing.T) {
	reqs := NewCounterVec("r_total", "R.", "endpoint", "code")
	dur := NewHistogramVec("d_seconds", "D.", []float64{1}, "endpoint")
	flushed := false
	h := InstrumentHandler(reqs, dur, "mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/teapot" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
			flushed = true
		}
	}))
	for _, p := range []string{"/", "/teapot", "/"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	r := NewRegistry()
	r.MustRegister(reqs, dur)
	got := scrape(t, r, false)
	for _, line := range []string{`r_total{code="200",endpoint="mcp"} 2`, `r_total{code="418",endpoint="mcp"} 1`, `d_seconds_count{endpoint="mcp"} 3`} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("no %s in\n%s", line, got)
		}
	}
	if !flushed {
		t.Error("the handler's writer is not a Flusher")
	}
}
