package hostd

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/sources"
)

// metrics make extension failures visible as numbers (SPEC R-HK-8) next to
// the usual request and reload health. Each Server has its own registry, so
// tests and several servers in one process do not collide.
type metrics struct {
	registry    *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	decisions   *prometheus.CounterVec
	toolRuns    *prometheus.CounterVec
	diagnostics *prometheus.CounterVec
	reloads     *prometheus.CounterVec
	loaded      prometheus.Gauge
	// sourcesFailing is the number of external skill sources the last load
	// could not fetch or verify; sourceFailures counts them over time.
	sourcesFailing prometheus.Gauge
	sourceFailures prometheus.Counter
	// refusals counts contexts refused by signature verification, by reason.
	refusals *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_hostd_requests_total", Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "loadout_hostd_request_duration_seconds", Help: "HTTP request latency by endpoint.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1, 5, 30},
		}, []string{"endpoint"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_hostd_tool_calls_total", Help: "Before-call decisions: allowed or blocked.",
		}, []string{"decision"}),
		toolRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_hostd_tool_runs_total", Help: "Runnable tool calls by outcome: ok, error (the tool failed), blocked (a hook), denied (tools.deny), invalid (arguments).",
		}, []string{"outcome"}),
		diagnostics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_hostd_hook_diagnostics_total", Help: "Extension hook failures and audit findings.",
		}, []string{"extension", "hook", "kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loadout_hostd_context_reloads_total", Help: "Context loads by result (success, failure).",
		}, []string{"result"}),
		loaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadout_hostd_context_loaded", Help: "1 when a context is being served.",
		}),
		sourcesFailing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadout_hostd_skill_sources_failing", Help: "External skill sources the last load could not fetch or verify.",
		}),
		sourceFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "loadout_hostd_skill_source_failures_total", Help: "External skill sources that could not be fetched or verified.",
		}),
	}
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "loadout_hostd_context_refusals_total", Help: "Contexts refused by signature verification, by reason (Unsigned, MalformedSignature, HashMismatch, WrongWorkspace, BadSignature).",
	}, []string{"reason"})
	m.registry.MustRegister(m.requests, m.duration, m.decisions, m.toolRuns, m.diagnostics, m.reloads, m.loaded, m.sourcesFailing, m.sourceFailures, m.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observeDiagnostics(diags []exthost.Diagnostic) {
	for _, d := range diags {
		m.diagnostics.WithLabelValues(d.ExtensionID, d.Hook, string(d.Kind)).Inc()
	}
}

// observeSources records how many external skill sources a load failed on.
func (m *metrics) observeSources(loadErr error) {
	var se *sources.Error
	if !errors.As(loadErr, &se) {
		if loadErr == nil {
			m.sourcesFailing.Set(0)
		}
		return
	}
	m.sourcesFailing.Set(float64(se.Failed))
	m.sourceFailures.Add(float64(se.Failed))
}
