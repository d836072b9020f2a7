package hostd

import (
	"context"
	"fmt"
	"time"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/promtext"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// Approvals (docs/hooks.md, "Approvals"): an imposed hook whose ask goes to
// the cluster turns the ask into an Approval object and a bounded wait; the
// call runs only on a decision Options.Approvals honours (an Approval this
// process created, for this exact call, once, before it expires). Every
// other outcome blocks the call naming the Approval and why.

// decideAsk settles an ask that goes to the cluster in place: on approval d
// allows d.Call; otherwise d blocks. The ask goes to the cluster when the
// deciding hook (d.Verdict, combined by the one rule: a tenant's ask cannot
// hide the platform's) is the platform's and names approvers, on every
// route for Cluster and for a headless agent on Headless. It returns the
// Approval for the ledger, nil when the ask stays the agent's.
func (s *Server) decideAsk(ctx context.Context, snap *snapshot, call exthost.ToolCall, d *exthost.Decision, headless bool) *ledger.Approval {
	if !d.Asks() {
		return nil
	}
	v := d.Verdict
	policy := v.ApprovalRoute()
	if policy == nil || (policy.Route == contract.ApprovalRouteHeadless && !headless) {
		return nil
	}
	question, decider := v.Reason, v.Decider()
	block := func(rec *ledger.Approval, msg string) *ledger.Approval {
		d.Deny(call, verdict.Verdict{Outcome: verdict.Deny, Extension: v.Extension, Hook: v.Hook, Imposed: v.Imposed, Approval: v.Approval,
			Reason: msg, Cause: verdict.CauseApproval}, map[string]any{"approval": rec.Name, "decision": rec.Decision})
		return rec
	}
	if s.opts.Approvals == nil {
		return block(&ledger.Approval{Decision: approval.Unavailable}, fmt.Sprintf(
			"hook %s asks the cluster's approvers about this call (%s), and this hostd has no access to the cluster (--approvals); the call is blocked", decider, question))
	}
	ws := ""
	if snap != nil {
		m := snap.published.Manifest().Workspace
		ws = m.Namespace + "/" + m.Name
	}
	req := approval.Request{Workspace: ws, Tool: d.Call.Name, Arguments: d.Call.Arguments, Digest: ledger.Digest(d.Call.Arguments),
		Extension: v.Extension, Hook: v.Hook, Question: question, ApproverGroups: policy.ApproverGroups,
		Expiry: time.Duration(policy.ExpirySeconds) * time.Second, Wait: time.Duration(policy.WaitSeconds) * time.Second}
	out := s.opts.Approvals.Decide(ctx, req, func(name string) {
		s.opts.Logger.Info("Waiting for approval", "approval", name, "tool", call.Name, "callId", call.ID, "hook", decider, "wait", req.Wait)
	})
	s.approvalStates.WithLabelValues(out.State).Inc()
	rec := &ledger.Approval{Name: out.Name, Decision: out.State, DecidedBy: out.DecidedBy}
	if out.State == approval.Approved {
		d.Blocked, d.Verdict.Outcome = nil, verdict.Allow
		return rec
	}
	return block(rec, out.Message(decider, question, policy.ApproverGroups))
}

// useApprovals registers loadout_hostd_approvals_total{state}.
func (s *Server) useApprovals() {
	s.approvalStates = promtext.NewCounterVec("loadout_hostd_approvals_total", "Asks taken to the cluster as Approvals, by outcome (Approved, Denied, Expired, Pending, Reused, Deleted, Unavailable).", "state")
	s.metrics.registry.MustRegister(s.approvalStates)
}
