package exthost

import (
	"context"
	"sync"
	"time"
)

// HookRun is one hook's run for one call or event: what hostd's decision
// ledger and its trace spans record of each hook, whatever it decided.
type HookRun struct {
	Extension string
	Hook      string
	// Event is the hook's event (AfterToolResult and ToolFailure hooks run
	// in one after phase).
	Event string
	// Outcome: allowed, rewrote, asked, denied (a blocking event), audit (an
	// observing event's finding), error or timeout.
	Outcome string
	Start   time.Time
	// Duration is how long the host waited for the hook.
	Duration time.Duration
	// RecordArguments: the hook's extension asks that the ledger record
	// the arguments (or prompt) it judged.
	RecordArguments bool
}

// Trace collects the HookRuns of the hooks run under a context made by
// WithTrace. It is safe for concurrent use.
type Trace struct {
	mu   sync.Mutex
	runs []HookRun
}

type traceKey struct{}

// WithTrace returns ctx recording every hook run under it into t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func traceFrom(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// Runs returns the hook runs so far, in the order they ended, and empties t.
func (t *Trace) Runs() []HookRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	runs := t.runs
	t.runs = nil
	return runs
}

// run runs the hook without the trace (so it is recorded once) and records
// it.
func (t *Trace) run(ctx context.Context, b boundHook, in Input) (Verdict, *Diagnostic) {
	start := time.Now()
	v, d := runHook(context.WithValue(ctx, traceKey{}, (*Trace)(nil)), b, in)
	run := HookRun{Extension: b.extension, Hook: b.hook.Name, Event: string(b.hook.Event), Start: start, Duration: time.Since(start),
		RecordArguments: b.hook.RecordArguments}
	switch {
	case d != nil:
		run.Outcome = string(d.Kind)
	case !v.Allowed && Blocking(b.hook.Event):
		run.Outcome = "denied"
	case !v.Allowed:
		run.Outcome = string(DiagnosticAudit)
	case v.Ask:
		run.Outcome = "asked"
	case v.Arguments != nil || v.Input != nil:
		run.Outcome = "rewrote"
	default:
		run.Outcome = "allowed"
	}
	t.mu.Lock()
	t.runs = append(t.runs, run)
	t.mu.Unlock()
	return v, d
}
