package hostd

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/hookwatch"
)

// withoutHooks is a FailureReporter that records the agents reported
// without hooks.
type withoutHooks struct {
	mu    sync.Mutex
	grace []time.Duration
}

func (w *withoutHooks) Report(exthost.Diagnostic) {}
func (w *withoutHooks) Run(context.Context)       {}
func (w *withoutHooks) ReportAgentWithoutHooks(_ time.Time, grace time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.grace = append(w.grace, grace)
}

func (w *withoutHooks) seen() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.grace...)
}

// An agent that opens hostd's MCP server and calls no hook (Claude Code
// whose managed settings were displaced by its organisation's
// server-managed settings) is counted and raised as an AgentWithoutHooks
// Event on the Workspace (hostd's FailureReporter, internal/hookevents)
// once the grace has passed. One that calls a hook
// is not, nor is an idle pod that opens nothing.
func TestHookWatch_AnAgentWithoutHooksIsAnEventOnTheWorkspace(t *testing.T) {
	const grace = 200 * time.Millisecond
	for _, tc := range []struct {
		name        string
		mcp, hooked bool
		want        bool
	}{
		{name: "mcp-no-hook", mcp: true, want: true},
		{name: "mcp-and-hook", mcp: true, hooked: true},
		{name: "idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := &withoutHooks{}
			s, ts, _ := serveContext(t, contextData(t, runnableRegistry("http://127.0.0.1:1", 5)),
				Options{Workspace: "team-a/dev", WatchHooks: func(report func(time.Time)) HookWatch { return hookwatch.New(grace, nil, report) }, PollInterval: time.Hour,
					HookFailureEvents: func(func(string)) FailureReporter { return events }})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { s.Run(ctx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })
			if tc.mcp {
				connectMCP(t, ts.URL, nil)
			}
			if tc.hooked {
				var out EventResponse
				if code := post(t, ts.URL+"/v1/events/SessionStart", map[string]any{"session": map[string]any{"id": "s"}}, &out); code != 200 {
					t.Fatalf("SessionStart: %d", code)
				}
			}
			deadline := time.Now().Add(10 * grace)
			for time.Now().Before(deadline) {
				if len(events.seen()) > 0 {
					break
				}
				time.Sleep(grace / 4)
			}
			reported := events.seen()
			metrics := get(t, ts.URL+"/metrics")
			counted := func(n string) bool {
				return strings.Contains(metrics, "\nloadout_hostd_agents_without_hooks_total "+n+"\n")
			}
			if !tc.want {
				if len(reported) != 0 || !counted("0") {
					t.Fatalf("reported %v, %s; want none", reported, grepLines(metrics, "without_hooks"))
				}
				return
			}
			if len(reported) != 1 || reported[0] != grace {
				t.Fatalf("reported %v, want one agent without hooks within %s", reported, grace)
			}
			if !counted("1") {
				t.Fatalf("metric: %s", grepLines(metrics, "without_hooks"))
			}
		})
	}
}
