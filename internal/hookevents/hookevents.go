// Package hookevents turns the hook failures hostd sees at runtime (a hook
// that errored or timed out) into Kubernetes Events on the Workspace
// (rule R-HK-8), bounded: at most one Event per hook and reason per
// interval, the failures in between counted into the next one, a bounded
// number of hooks tracked and a bounded queue of Events to send. Reporting
// never blocks a call: what does not fit is dropped and counted.
package hookevents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// Bounds of the reporter.
const (
	// DefaultInterval is the least time between two Events of one hook and
	// reason.
	DefaultInterval = 5 * time.Minute
	// maxTracked bounds the hooks and reasons tracked at once; a failure of
	// one more is counted in the metric only.
	maxTracked = 256
	// queueSize bounds the Events waiting to be sent.
	queueSize = 16
	// maxMessage bounds an Event's message (the API server's own limit is
	// 1 KiB for events.k8s.io; core Events are cut to the same).
	maxMessage = 1024
	// sendTimeout bounds one Event's creation.
	sendTimeout = 10 * time.Second
)

// Event reasons on the Workspace.
const (
	ReasonHookFailed   = "HookFailed"
	ReasonHookTimedOut = "HookTimedOut"
	// ReasonAgentWithoutHooks: an agent in the pod opened hostd's MCP
	// server and called no hook (internal/hookwatch).
	ReasonAgentWithoutHooks = "AgentWithoutHooks"
)

// Creator creates an Event (core/v1, JSON) in the Workspace's namespace.
type Creator interface {
	CreateEvent(ctx context.Context, event []byte) error
}

// Outcome names what became of one failure, for the metric.
type Outcome string

// The outcomes of a failure.
const (
	Sent       Outcome = "sent"       // an Event was created for it
	Counted    Outcome = "counted"    // within the interval: counted into the next Event
	Dropped    Outcome = "dropped"    // the queue was full or too many hooks failing
	SendFailed Outcome = "sendFailed" // the API server refused or did not answer
)

// Options configure a Reporter.
type Options struct {
	Creator Creator
	// Namespace and Workspace name the Workspace the Events are about.
	Namespace, Workspace string
	// Pod is the reporting pod (source.host, reportingInstance).
	Pod      string
	Interval time.Duration
	Now      func() time.Time
	// Observe is told each failure's outcome (the metric); may be nil.
	Observe func(Outcome)
}

type key struct{ extension, hook, reason string }

type tracked struct {
	first, last time.Time // of the failures not yet in an Event
	sentAt      time.Time
	count       int // failures since the last Event
	message     string
}

// Reporter reports hook failures as Events. Start Run once.
type Reporter struct {
	opts  Options
	mu    sync.Mutex
	keys  map[key]*tracked
	queue chan []byte
}

// New returns a Reporter.
func New(opts Options) *Reporter {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Observe == nil {
		opts.Observe = func(Outcome) {}
	}
	return &Reporter{opts: opts, keys: map[key]*tracked{}, queue: make(chan []byte, queueSize)}
}

// Report takes one diagnostic; failures (error, timeout) become Events, the
// rest are ignored. It never blocks.
func (r *Reporter) Report(d exthost.Diagnostic) {
	var reason string
	switch d.Kind {
	case exthost.DiagnosticError:
		reason = ReasonHookFailed
	case exthost.DiagnosticTimeout:
		reason = ReasonHookTimedOut
	default:
		return
	}
	r.record(key{d.ExtensionID, d.Hook, reason}, d.Message)
}

// ReportAgentWithoutHooks takes one episode of an agent that opened
// hostd's MCP server at since and called no hook within grace, bounded as
// failures are. It never blocks.
func (r *Reporter) ReportAgentWithoutHooks(since time.Time, grace time.Duration) {
	r.record(key{reason: ReasonAgentWithoutHooks}, fmt.Sprintf("an agent opened hostd's MCP server at %s and called none of the Workspace's hooks within %s: "+
		"its calls are not judged (server-managed settings of its organisation displace Claude Code's managed settings unless the pod reaches the model through the platform's gateway)",
		since.UTC().Format(time.RFC3339), grace))
}

// record counts one report of k and queues its Event when due.
func (r *Reporter) record(k key, message string) {
	now := r.opts.Now()
	r.mu.Lock()
	t := r.keys[k]
	if t == nil {
		if len(r.keys) >= maxTracked {
			r.mu.Unlock()
			r.opts.Observe(Dropped)
			return
		}
		t = &tracked{}
		r.keys[k] = t
	}
	if t.count == 0 {
		t.first = now
	}
	t.count++
	t.last, t.message = now, message
	if !t.sentAt.IsZero() && now.Sub(t.sentAt) < r.opts.Interval {
		r.mu.Unlock()
		r.opts.Observe(Counted)
		return
	}
	event := r.take(k, t, now)
	r.mu.Unlock()
	r.enqueue(event)
}

// take makes the Event of t's failures and starts counting anew. The
// caller holds mu.
func (r *Reporter) take(k key, t *tracked, now time.Time) []byte {
	event := r.event(k, t)
	t.sentAt, t.count = now, 0
	return event
}

func (r *Reporter) enqueue(event []byte) {
	select {
	case r.queue <- event:
	default:
		r.opts.Observe(Dropped)
	}
}

// Run sends the queued Events until ctx ends, and once per interval the
// Events of failures counted since their hook's last Event.
func (r *Reporter) Run(ctx context.Context) {
	tick := time.NewTicker(r.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case event := <-r.queue:
			sctx, cancel := context.WithTimeout(ctx, sendTimeout)
			err := r.opts.Creator.CreateEvent(sctx, event)
			cancel()
			if err != nil {
				r.opts.Observe(SendFailed)
			} else {
				r.opts.Observe(Sent)
			}
		case <-tick.C:
			r.Flush()
		}
	}
}

// Flush queues an Event for every hook whose failures since its last Event
// are due, and forgets hooks quiet for a whole interval.
func (r *Reporter) Flush() {
	now := r.opts.Now()
	var due [][]byte
	r.mu.Lock()
	for k, t := range r.keys {
		switch {
		case t.count > 0 && now.Sub(t.sentAt) >= r.opts.Interval:
			due = append(due, r.take(k, t, now))
		case t.count == 0 && now.Sub(t.sentAt) >= r.opts.Interval:
			delete(r.keys, k)
		}
	}
	r.mu.Unlock()
	for _, e := range due {
		r.enqueue(e)
	}
}

// coreEvent is the core/v1 Event hostd creates.
type coreEvent struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Metadata       eventMeta      `json:"metadata"`
	InvolvedObject objectRef      `json:"involvedObject"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message"`
	Type           string         `json:"type"`
	Count          int            `json:"count"`
	FirstTimestamp string         `json:"firstTimestamp"`
	LastTimestamp  string         `json:"lastTimestamp"`
	Source         map[string]any `json:"source"`
	ReportingComp  string         `json:"reportingComponent"`
	ReportingInst  string         `json:"reportingInstance,omitempty"`
}

type eventMeta struct {
	GenerateName string `json:"generateName"`
	Namespace    string `json:"namespace"`
}

type objectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

func (r *Reporter) event(k key, t *tracked) []byte {
	var msg string
	switch k.reason {
	case ReasonAgentWithoutHooks:
		msg = t.message
		if t.count > 1 {
			msg = fmt.Sprintf("%d times since %s, the last: %s", t.count, t.first.UTC().Format(time.RFC3339), msg)
		}
	default:
		what := "failed"
		if k.reason == ReasonHookTimedOut {
			what = "timed out"
		}
		msg = fmt.Sprintf("hook %s of extension %s %s", k.hook, k.extension, what)
		if t.count > 1 {
			msg += fmt.Sprintf(" %d times since %s", t.count, t.first.UTC().Format(time.RFC3339))
		}
		msg += ": " + t.message
	}
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage-3], "") + "..."
	}
	source := map[string]any{"component": "loadout-hostd"}
	if r.opts.Pod != "" {
		source["host"] = r.opts.Pod
	}
	b, _ := json.Marshal(coreEvent{APIVersion: "v1", Kind: "Event",
		Metadata:       eventMeta{GenerateName: r.opts.Workspace + ".", Namespace: r.opts.Namespace},
		InvolvedObject: objectRef{APIVersion: "loadout.dev/v1alpha1", Kind: "Workspace", Namespace: r.opts.Namespace, Name: r.opts.Workspace},
		Reason:         k.reason, Message: msg, Type: "Warning", Count: t.count,
		FirstTimestamp: t.first.UTC().Format(time.RFC3339), LastTimestamp: t.last.UTC().Format(time.RFC3339),
		Source: source, ReportingComp: "loadout.dev/hostd", ReportingInst: r.opts.Pod})
	return b
}
