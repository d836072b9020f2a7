package hostd

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/ledger"
)

// Approvals (docs/hooks.md, "Approvals"): an imposed hook whose ask goes to
// the cluster turns the ask into an Approval object and a bounded wait; the
// call runs only on a decision Options.Approvals honours (an Approval this
// process created, for this exact call, once, before it expires). Every
// other outcome blocks the call naming the Approval and why.

// decideAsk settles an ask that goes to the cluster in place: on approval d
// allows d.Call; otherwise d blocks. headless says the agent has no user to
// ask. It returns the Approval for the ledger, nil when the ask stays the
// agent's.
func (s *Server) decideAsk(ctx context.Context, snap *snapshot, call exthost.ToolCall, d *exthost.Decision, headless bool) *ledger.Approval {
	if !d.Ask || d.Blocked == nil {
		return nil
	}
	ext, _ := d.Blocked.Details["extension"].(string)
	hook, _ := d.Blocked.Details["hook"].(string)
	policy, imposed := snap.host.Approval(ext, hook)
	if policy == nil || !imposed || (policy.Route == contract.ApprovalRouteHeadless && !headless) {
		return nil
	}
	question := resultText(d.Blocked)
	block := func(rec *ledger.Approval, format string, args ...any) *ledger.Approval {
		msg := fmt.Sprintf(format, args...)
		r := exthost.BlockedResult(call, msg, map[string]any{"extension": ext, "hook": hook, "approval": rec.Name, "decision": rec.Decision})
		d.Blocked, d.Ask = &r, false
		return rec
	}
	if s.opts.Approvals == nil {
		return block(&ledger.Approval{Decision: approval.Unavailable},
			"hook %s/%s asks the cluster's approvers about this call (%s), and this hostd has no access to the cluster (--approvals); the call is blocked", ext, hook, question)
	}
	ws := ""
	if snap != nil {
		m := snap.published.Manifest().Workspace
		ws = m.Namespace + "/" + m.Name
	}
	req := approval.Request{Workspace: ws, Tool: d.Call.Name, Arguments: d.Call.Arguments, Digest: ledger.Digest(d.Call.Arguments),
		Extension: ext, Hook: hook, Question: question, ApproverGroups: policy.ApproverGroups,
		Expiry: time.Duration(policy.ExpirySeconds) * time.Second, Wait: time.Duration(policy.WaitSeconds) * time.Second}
	out := s.opts.Approvals.Decide(ctx, req, func(name string) {
		s.opts.Logger.Info("Waiting for approval", "approval", name, "tool", call.Name, "callId", call.ID, "hook", ext+"/"+hook, "wait", req.Wait)
	})
	s.approvalStates.WithLabelValues(out.State).Inc()
	rec := &ledger.Approval{Name: out.Name, Decision: out.State, DecidedBy: out.DecidedBy}
	switch out.State {
	case approval.Approved:
		d.Blocked, d.Ask = nil, false
		return rec
	case approval.Pending:
		return block(rec, "waiting for approval %s (%s: %s) by %v: %s; ask again with the same call to keep waiting",
			out.Name, ext+"/"+hook, question, policy.ApproverGroups, out.Reason)
	case approval.Denied:
		reason := out.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return block(rec, "approval %s was denied by %s: %s; the call is blocked", out.Name, orSomeone(out.DecidedBy), reason)
	case approval.Unavailable:
		return block(rec, "hook %s/%s asks the cluster's approvers about this call, and hostd could not ask: %s; the call is blocked", ext, hook, out.Reason)
	default:
		return block(rec, "approval %s: %s (%s); the call is blocked", out.Name, out.Reason, out.State)
	}
}

func orSomeone(user string) string {
	if user == "" {
		return "an approver"
	}
	return user
}

// resultText is a blocked result's reason, as the agent reads it.
func resultText(r *exthost.ToolResult) string {
	if reason, ok := r.Details["reason"].(string); ok {
		return reason
	}
	if len(r.Content) > 0 {
		return r.Content[0].Text
	}
	return ""
}

// useApprovals registers loadout_hostd_approvals_total{state}.
func (s *Server) useApprovals() {
	s.approvalStates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_hostd_approvals_total",
		Help: "Asks taken to the cluster as Approvals, by outcome (Approved, Denied, Expired, Pending, Reused, Deleted, Unavailable)."}, []string{"state"})
	s.metrics.registry.MustRegister(s.approvalStates)
}
