package hostd

import (
	"context"
	"encoding/json"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/promtext"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// The decision ledger (docs/hostd.md, "Decision ledger"): every verdict
// hostd reaches is one record on Options.Ledger. Arguments are never in a
// record, only their digests before and after the hooks' rewrites.

// newRecord is a record of the served context snap (nil: none loaded).
func (s *Server) newRecord(snap *snapshot, surface string, event vocab.HookEvent) *ledger.Record {
	r := &ledger.Record{Time: s.opts.Now().UTC().Format(time.RFC3339Nano), Surface: surface, Event: string(event), Pod: s.opts.Pod}
	if snap != nil {
		r.Context = snap.hash
		ws := snap.published.Manifest().Workspace
		r.Workspace = ws.Namespace + "/" + ws.Name
	}
	return r
}

// traced returns ctx recording each hook's run when anything records
// verdicts, and the trace (nil otherwise: no cost when the ledger is off).
func (s *Server) traced(ctx context.Context) (context.Context, *exthost.Trace) {
	if s.opts.Ledger == nil {
		return ctx, nil
	}
	t := &exthost.Trace{}
	return exthost.WithTrace(ctx, t), t
}

// runsOf is t's runs; nil for a nil trace.
func runsOf(t *exthost.Trace) []exthost.HookRun {
	if t == nil {
		return nil
	}
	return t.Runs()
}

// recordCall records the before verdict d on call: d.Call is the call as
// it runs (rewrites merged in; empty Name: as sent); runs are the hooks
// that ran; apv is the cluster's answer to an ask, if it was asked.
func (s *Server) recordCall(snap *snapshot, surface string, call exthost.ToolCall, d *exthost.Decision, executed bool, runs []exthost.HookRun, apv *ledger.Approval) {
	if s.opts.Ledger == nil {
		return
	}
	r := s.newRecord(snap, surface, vocab.BeforeToolCall)
	r.Tool, r.CallID, r.Executed, r.Approval = call.Name, call.ID, executed, apv
	r.ArgumentsDigest = ledger.Digest(call.Arguments)
	r.ArgumentsDigestAfter = r.ArgumentsDigest
	if d.Call.Name != "" {
		r.ArgumentsDigestAfter = ledger.Digest(d.Call.Arguments)
	}
	r.Rewritten = r.ArgumentsDigestAfter != r.ArgumentsDigest
	r.Hooks = ledgerHooks(runs)
	if recordsArguments(runs) {
		r.Arguments = argumentsJSON(call.Arguments)
	}
	switch {
	case d.Blocked == nil:
		r.Verdict = "allowed"
	case d.Asks():
		r.Verdict, r.Reason = "ask", string(verdict.CauseHook)
	default:
		r.Verdict, r.Reason = "blocked", string(d.Verdict.Cause)
	}
	s.opts.Ledger.Write(r)
}

// recordEvent records a session event's outcome.
func (s *Server) recordEvent(snap *snapshot, surface string, req exthost.EventRequest, out exthost.EventOutcome, runs []exthost.HookRun) {
	if s.opts.Ledger == nil {
		return
	}
	r := s.newRecord(snap, surface, req.Event)
	if req.Prompt != nil {
		r.ArgumentsDigest = ledger.DigestBytes([]byte(req.Prompt.Text))
		r.ArgumentsDigestAfter = r.ArgumentsDigest
		if out.Input != nil {
			r.ArgumentsDigestAfter = ledger.DigestBytes([]byte(*out.Input))
			r.Rewritten = r.ArgumentsDigestAfter != r.ArgumentsDigest
		}
	}
	r.Hooks = ledgerHooks(runs)
	if req.Prompt != nil && recordsArguments(runs) {
		r.Prompt = &req.Prompt.Text
	}
	switch {
	case out.Allowed:
		r.Verdict = "allowed"
	case out.Ask:
		r.Verdict, r.Reason = "ask", "hook"
	default:
		r.Verdict, r.Reason = "stopped", "hook"
	}
	s.opts.Ledger.Write(r)
}

// recordAfter records the after hooks' runs on a result.
func (s *Server) recordAfter(snap *snapshot, surface string, call exthost.ToolCall, runs []exthost.HookRun) {
	if s.opts.Ledger == nil {
		return
	}
	r := s.newRecord(snap, surface, vocab.AfterToolResult)
	r.Tool, r.CallID, r.Verdict = call.Name, call.ID, "observed"
	r.ArgumentsDigest = ledger.Digest(call.Arguments)
	r.Hooks = ledgerHooks(runs)
	s.opts.Ledger.Write(r)
}

// recordStale records a call or event denied because the served context's
// platform policy is stale.
func (s *Server) recordStale(surface string, event vocab.HookEvent, call exthost.ToolCall) {
	if s.opts.Ledger == nil {
		return
	}
	r := s.newRecord(s.current.Load(), surface, event)
	r.Tool, r.CallID, r.Verdict, r.Reason = call.Name, call.ID, "blocked", ReasonStalePolicy
	if event != vocab.BeforeToolCall {
		r.Verdict = "stopped"
	} else {
		r.ArgumentsDigest = ledger.Digest(call.Arguments)
	}
	s.opts.Ledger.Write(r)
}

// recordsArguments reports whether a hook that ran asks for the arguments
// in the record (its extension's recordArguments).
func recordsArguments(runs []exthost.HookRun) bool {
	for _, h := range runs {
		if h.RecordArguments {
			return true
		}
	}
	return false
}

// argumentsJSON is a call's arguments as a record carries them: {} for none.
func argumentsJSON(args map[string]any) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	return b
}

func ledgerHooks(runs []exthost.HookRun) []ledger.Hook {
	if len(runs) == 0 {
		return nil
	}
	hooks := make([]ledger.Hook, len(runs))
	for i, h := range runs {
		hooks[i] = ledger.Hook{Extension: h.Extension, Hook: h.Hook, Outcome: h.Outcome, Micros: h.Duration.Microseconds(), Start: h.Start}
	}
	return hooks
}

// useLedger counts the ledger's records and failed writes in the metrics
// (loadout_hostd_ledger_records_total, loadout_hostd_ledger_write_failures_total)
// and logs failed writes: the 1st, 2nd, 4th, 8th... so a full disk is not
// a log line per call.
func (s *Server) useLedger(l *ledger.Writer) {
	s.metrics.registry.MustRegister(
		promtext.NewCounterFunc("loadout_hostd_ledger_records_total", "Decision ledger records written (docs/hostd.md, Decision ledger).", func() float64 { return float64(l.Written()) }),
		promtext.NewCounterFunc("loadout_hostd_ledger_write_failures_total", "Decision ledger records whose write failed; the verdicts were not held back.", func() float64 { return float64(l.Failed()) }))
	if l.OnError == nil {
		l.OnError = func(err error) {
			if n := l.Failed(); n&(n-1) == 0 {
				s.opts.Logger.Error("A decision ledger record could not be written; verdicts go on", "error", err, "failedRecords", n)
			}
		}
	}
}
