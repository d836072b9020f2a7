package hostd

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/hookevents"
)

// eventLog records the Kubernetes Events hostd creates.
type eventLog struct {
	mu      sync.Mutex
	reasons []string
	texts   []string
}

func (l *eventLog) CreateEvent(_ context.Context, b []byte) error {
	var e struct{ Reason, Message string }
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reasons = append(l.reasons, e.Reason)
	l.texts = append(l.texts, e.Message)
	return nil
}

func (l *eventLog) seen() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reasons...), append([]string(nil), l.texts...)
}

// An agent that opens hostd's MCP server and calls no hook (Claude Code
// whose managed settings were displaced by its organisation's
// server-managed settings) is counted and raised as an AgentWithoutHooks
// Event on the Workspace once the grace has passed. One that calls a hook
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
			events := &eventLog{}
			s, ts, _ := serveContext(t, contextData(t, runnableRegistry("http://127.0.0.1:1", 5)),
				Options{Workspace: "team-a/dev", HookEvents: events, HookWatchGrace: grace, PollInterval: time.Hour})
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
				if reasons, _ := events.seen(); len(reasons) > 0 {
					break
				}
				time.Sleep(grace / 4)
			}
			reasons, texts := events.seen()
			metrics := get(t, ts.URL+"/metrics")
			counted := func(n string) bool { return strings.Contains(metrics, "\nloadout_hostd_agents_without_hooks_total "+n+"\n") }
			if !tc.want {
				if len(reasons) != 0 || !counted("0") {
					t.Fatalf("Events %v, %s; want none", reasons, grepLines(metrics, "without_hooks"))
				}
				return
			}
			if len(reasons) != 1 || reasons[0] != hookevents.ReasonAgentWithoutHooks || !strings.Contains(texts[0], "called none of the Workspace's hooks within 200ms") {
				t.Fatalf("Events %v %q, want one %s", reasons, texts, hookevents.ReasonAgentWithoutHooks)
			}
			if !counted("1") {
				t.Fatalf("metric: %s", grepLines(metrics, "without_hooks"))
			}
		})
	}
}
