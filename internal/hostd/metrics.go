package hostd

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/promtext"
)

// FailureReporter is told of every hook failure hostd records, and of each
// agent that ran without hooks (internal/hookwatch), and reports them
// outside hostd, rate-limited (internal/hookevents: an Event on the
// Workspace). Run delivers until ctx is done.
type FailureReporter interface {
	Report(d exthost.Diagnostic)
	// ReportAgentWithoutHooks: an agent opened the MCP server at since
	// and called no hook within grace.
	ReportAgentWithoutHooks(since time.Time, grace time.Duration)
	Run(ctx context.Context)
}

// metrics make extension failures visible as numbers (rule R-HK-8) next to
// the usual request and reload health. Each Server has its own registry, so
// tests and several servers in one process do not collide.
type metrics struct {
	registry    *promtext.Registry
	requests    *promtext.CounterVec
	duration    *promtext.HistogramVec
	decisions   *promtext.CounterVec
	toolRuns    *promtext.CounterVec
	diagnostics *promtext.CounterVec
	reloads     *promtext.CounterVec
	loaded      *promtext.GaugeVec
	// sourcesFailing is the number of external skill sources that could
	// not be fetched or verified, and sourceFailing names each (skill and a
	// short reason, never remote content); sourcesPending counts those still
	// being fetched; sourceFailures counts failed fetches over time.
	sourcesFailing *promtext.GaugeVec
	sourceFailing  *promtext.GaugeVec
	sourcesPending *promtext.GaugeVec
	sourceFailures *promtext.CounterVec
	// refusals counts contexts refused by signature verification, by reason.
	refusals *promtext.CounterVec
	// treeCurrent is 1 while the materialized tree holds the served
	// context; treeFailures counts the writes that could not bring it there.
	treeCurrent  *promtext.GaugeVec
	treeFailures *promtext.CounterVec
	// hookFailures counts every hook failure (a diagnostic of kind error
	// or timeout), by kind; failureLog logs each once per context.
	hookFailures *promtext.CounterVec
	// toolOutputs counts answers over their tool's output limit, by what
	// hostd did (truncate, refuse).
	toolOutputs *promtext.CounterVec
	failureLog  *failureLog
	// failureEvents reports each failure as an Event on the Workspace,
	// rate-limited; failureEventOutcomes counts what became of each.
	failureEvents        FailureReporter
	failureEventOutcomes *promtext.CounterVec
	// agentsWithoutHooks counts agents that opened the MCP server and
	// called no hook within the grace (internal/hookwatch).
	agentsWithoutHooks *promtext.CounterVec
}

// failureLog logs a hook failure once per context, extension, hook and
// kind: a hook that fails on every call is one log line for the context
// it fails in, not one per call, while hookFailures counts every call.
// Without a logger it logs nothing.
type failureLog struct {
	logger *slog.Logger
	// hash returns the served context's hash; the lines seen are
	// forgotten when it changes, so a new context logs its failures again.
	hash func() string
	mu   sync.Mutex
	at   string
	seen map[[3]string]struct{}
}

// first reports whether d is the first failure of its hook and kind in the
// context being served, and that context's hash.
func (l *failureLog) first(d exthost.Diagnostic) (string, bool) {
	hash := l.hash()
	l.mu.Lock()
	defer l.mu.Unlock()
	if hash != l.at || l.seen == nil {
		l.at, l.seen = hash, map[[3]string]struct{}{}
	}
	key := [3]string{d.ExtensionID, d.Hook, string(d.Kind)}
	if _, ok := l.seen[key]; ok {
		return hash, false
	}
	l.seen[key] = struct{}{}
	return hash, true
}

func newMetrics() *metrics {
	m := &metrics{
		registry:       promtext.NewRegistry(),
		requests:       promtext.NewCounterVec("loadout_hostd_requests_total", "HTTP requests by endpoint and status code.", "endpoint", "code"),
		duration:       promtext.NewHistogramVec("loadout_hostd_request_duration_seconds", "HTTP request latency by endpoint.", []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1, 5, 30}, "endpoint"),
		decisions:      promtext.NewCounterVec("loadout_hostd_tool_calls_total", "Before-call decisions: allowed or blocked.", "decision"),
		toolRuns:       promtext.NewCounterVec("loadout_hostd_tool_runs_total", "Runnable tool calls by outcome: ok, error (the tool failed), blocked (a hook), denied (tools.deny), invalid (arguments).", "outcome"),
		diagnostics:    promtext.NewCounterVec("loadout_hostd_hook_diagnostics_total", "Extension hook failures and audit findings.", "extension", "hook", "kind"),
		reloads:        promtext.NewCounterVec("loadout_hostd_context_reloads_total", "Context loads by result (success, failure).", "result"),
		loaded:         promtext.NewGauge("loadout_hostd_context_loaded", "1 when a context is being served."),
		sourcesFailing: promtext.NewGauge("loadout_hostd_skill_sources_failing", "External skill sources of the served context that could not be fetched or verified."),
		sourceFailing:  promtext.NewGaugeVec("loadout_hostd_skill_source_failing", "1 for each skill whose external source could not be fetched or verified, with a short reason.", "skill", "reason"),
		sourcesPending: promtext.NewGauge("loadout_hostd_skill_sources_pending", "External skill sources of the served context still being fetched."),
		sourceFailures: promtext.NewCounter("loadout_hostd_skill_source_failures_total", "Fetches of external skill sources that failed or whose content was refused."),
		treeCurrent:    promtext.NewGauge("loadout_hostd_tree_current", "1 while the materialized tree holds the served context (hostd --materialize)."),
		treeFailures:   promtext.NewCounter("loadout_hostd_tree_write_failures_total", "Attempts that could not bring the materialized tree to the served context."),
	}
	m.refusals = promtext.NewCounterVec("loadout_hostd_context_refusals_total", "Contexts refused, by reason: signature verification (Unsigned, MalformedSignature, HashMismatch, WrongWorkspace, WrongConfigMap, BadSignature) or the namespace's policy epoch (StalePolicy: a new context refused, or the served one stopped).", "reason")
	m.hookFailures = promtext.NewCounterVec("loadout_hostd_hook_failures_total", "Hook failures (a hook that errored or timed out), on every event, by kind (error, timeout).", "kind")
	m.toolOutputs = promtext.NewCounterVec("loadout_hostd_tool_output_overflows_total", "Runnable tool answers over their tool's output limit, by what hostd did (truncate, refuse).", "action")
	m.failureEventOutcomes = promtext.NewCounterVec("loadout_hostd_hook_failure_events_total", "Hook failures by what became of their Kubernetes Event: sent, counted (into the hook's next Event), dropped (queue full, too many hooks failing), sendFailed.", "outcome")
	m.agentsWithoutHooks = promtext.NewCounter("loadout_hostd_agents_without_hooks_total", "Agents that opened hostd's MCP server and called no hook within the grace (2m by default): they run without the Workspace's hooks.")
	m.registry.MustRegister(m.agentsWithoutHooks, m.failureEventOutcomes, m.toolOutputs, m.requests, m.duration, m.decisions, m.toolRuns, m.diagnostics, m.reloads, m.loaded,
		m.sourcesFailing, m.sourceFailing, m.sourcesPending, m.sourceFailures, m.treeCurrent, m.treeFailures, m.refusals, m.hookFailures,
		promtext.GoCollector{}, promtext.ProcessCollector{})
	return m
}

// observeDiagnostics counts every diagnostic, and every failure among them
// (error, timeout) again in hookFailures; each failure is logged once per
// context, extension, hook and kind (failureLog).
func (m *metrics) observeDiagnostics(diags []exthost.Diagnostic) {
	for _, d := range diags {
		m.diagnostics.WithLabelValues(d.ExtensionID, d.Hook, string(d.Kind)).Inc()
		if d.Kind != exthost.DiagnosticError && d.Kind != exthost.DiagnosticTimeout {
			continue
		}
		m.hookFailures.WithLabelValues(string(d.Kind)).Inc()
		if m.failureEvents != nil {
			m.failureEvents.Report(d)
		}
		if l := m.failureLog; l != nil && l.logger != nil {
			if hash, first := l.first(d); first {
				l.logger.Warn("Hook failed; further failures of this hook in this context are counted, not logged",
					"extension", d.ExtensionID, "hook", d.Hook, "kind", string(d.Kind), "message", d.Message, "hash", hash,
					"metric", "loadout_hostd_hook_failures_total")
			}
		}
	}
}

// observeSources sets the source gauges to the served context's external
// skills that are not at their pinned version.
func (m *metrics) observeSources(statuses []SourceStatus) {
	failing, pending := 0, 0
	m.sourceFailing.Reset()
	for _, st := range statuses {
		if st.State == "failing" {
			failing++
			m.sourceFailing.WithLabelValues(st.Skill, st.Reason).Set(1)
		} else {
			pending++
		}
	}
	m.sourcesFailing.Set(float64(failing))
	m.sourcesPending.Set(float64(pending))
}
