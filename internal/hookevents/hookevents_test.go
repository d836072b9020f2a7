package hookevents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
)

type recorder struct {
	mu     sync.Mutex
	events []coreEvent
}

func (r *recorder) CreateEvent(_ context.Context, b []byte) error {
	var e coreEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return nil
}

func failure(hook string, kind exthost.DiagnosticKind) exthost.Diagnostic {
	return exthost.Diagnostic{ExtensionID: "guard", Hook: hook, Kind: kind, Message: "webhook answered 500"}
}

// drain sends what is queued.
func drain(t *testing.T, r *Reporter, rec *recorder) []coreEvent {
	t.Helper()
	for {
		select {
		case b := <-r.queue:
			if err := rec.CreateEvent(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		default:
			return rec.events
		}
	}
}

// R-HK-8: a failing hook raises one Event on the Workspace; its failures
// within the interval are counted into the next one, never one each.
func TestReporter_OneEventPerHookAndReasonPerInterval(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var outcomes []Outcome
	rec := &recorder{}
	r := New(Options{Creator: rec, Namespace: "team-a", Workspace: "dev", Pod: "agent-0", Now: func() time.Time { return now },
		Observe: func(o Outcome) { outcomes = append(outcomes, o) }})
	r.Report(failure("no-secrets", exthost.DiagnosticError))
	r.Report(exthost.Diagnostic{ExtensionID: "guard", Hook: "audit", Kind: exthost.DiagnosticAudit, Message: "not a failure"})
	for range 10 {
		now = now.Add(time.Second)
		r.Report(failure("no-secrets", exthost.DiagnosticError))
	}
	r.Report(failure("no-secrets", exthost.DiagnosticTimeout)) // another reason: its own Event
	got := drain(t, r, rec)
	if len(got) != 2 {
		t.Fatalf("%d Events, want 2 (one per reason): %+v", len(got), got)
	}
	e := got[0]
	if e.Reason != ReasonHookFailed || e.Type != "Warning" || e.Count != 1 || e.Metadata.Namespace != "team-a" || e.Metadata.GenerateName != "dev." ||
		e.InvolvedObject != (objectRef{APIVersion: "loadout.dev/v1alpha1", Kind: "Workspace", Namespace: "team-a", Name: "dev"}) ||
		e.Message != "hook no-secrets of extension guard failed: webhook answered 500" || e.ReportingInst != "agent-0" {
		t.Fatalf("first Event = %+v", e)
	}
	if got[1].Reason != ReasonHookTimedOut || !strings.Contains(got[1].Message, "timed out") {
		t.Fatalf("second Event = %+v", got[1])
	}
	// Within the interval nothing more is sent; at its end the counted
	// failures go out as one Event.
	r.Flush()
	if len(drain(t, r, rec)) != 2 {
		t.Fatal("an Event was sent within the interval")
	}
	now = now.Add(DefaultInterval)
	r.Flush()
	got = drain(t, r, rec)
	if len(got) != 3 || got[2].Count != 10 || !strings.Contains(got[2].Message, "failed 10 times since 2026-01-02T03:04:06Z") {
		t.Fatalf("the counted failures' Event: %+v", got[len(got)-1])
	}
	// A whole quiet interval forgets the hook; the next failure is
	// reported at once.
	now = now.Add(DefaultInterval)
	r.Flush()
	if len(r.keys) != 0 {
		t.Fatalf("%d quiet hooks still tracked", len(r.keys))
	}
	r.Report(failure("no-secrets", exthost.DiagnosticError))
	if got = drain(t, r, rec); len(got) != 4 || got[3].Count != 1 {
		t.Fatalf("after a quiet interval: %+v", got)
	}
	if fmt.Sprint(outcomes) != "[counted counted counted counted counted counted counted counted counted counted]" {
		t.Fatalf("outcomes = %v", outcomes)
	}
}

// A flood is bounded: at most maxTracked hooks and queueSize Events
// waiting; the rest is dropped and counted, and Report never blocks.
func TestReporter_FloodIsBounded(t *testing.T) {
	dropped := 0
	r := New(Options{Creator: &recorder{}, Namespace: "team-a", Workspace: "dev",
		Observe: func(o Outcome) {
			if o == Dropped {
				dropped++
			}
		}})
	for i := range 1000 {
		r.Report(failure(fmt.Sprintf("hook-%d", i), exthost.DiagnosticError))
	}
	if len(r.keys) != maxTracked || len(r.queue) != queueSize || dropped != 1000-queueSize {
		t.Fatalf("tracked %d, queued %d, dropped %d", len(r.keys), len(r.queue), dropped)
	}
	long := failure("long", exthost.DiagnosticError)
	long.Message = strings.Repeat("é", 2000)
	r2 := New(Options{Creator: &recorder{}, Namespace: "team-a", Workspace: "dev"})
	r2.Report(long)
	var e coreEvent
	if err := json.Unmarshal(<-r2.queue, &e); err != nil || len(e.Message) > maxMessage || !strings.HasSuffix(e.Message, "...") {
		t.Fatalf("a long message: %d bytes, %v", len(e.Message), err)
	}
}

// An agent that opened hostd's MCP server and called no hook raises an
// AgentWithoutHooks Event on the Workspace, saying since when and why it
// matters; further episodes within the interval are counted into the next.
func TestReporter_AgentWithoutHooksIsAnEventOnTheWorkspace(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &recorder{}
	r := New(Options{Creator: rec, Namespace: "team-a", Workspace: "dev", Pod: "agent-0", Now: func() time.Time { return now }})
	r.ReportAgentWithoutHooks(now.Add(-2*time.Minute), 2*time.Minute)
	r.ReportAgentWithoutHooks(now, 2*time.Minute)
	got := drain(t, r, rec)
	if len(got) != 1 {
		t.Fatalf("%d Events, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.Reason != ReasonAgentWithoutHooks || e.Type != "Warning" || e.InvolvedObject.Kind != "Workspace" || e.InvolvedObject.Name != "dev" ||
		!strings.Contains(e.Message, "opened hostd's MCP server at 2026-01-02T03:02:05Z and called none of the Workspace's hooks within 2m0s") ||
		!strings.Contains(e.Message, "server-managed settings") {
		t.Fatalf("Event = %+v", e)
	}
	now = now.Add(DefaultInterval)
	r.Flush()
	if got = drain(t, r, rec); len(got) != 2 || got[1].Count != 1 {
		t.Fatalf("the counted episode's Event: %+v", got)
	}
}
