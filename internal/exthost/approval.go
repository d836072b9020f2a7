package exthost

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// The defaults and bounds of a hook's approval, as the Extension CRD sets
// them; a published registry is checked against them again because it never
// passed admission.
const (
	DefaultApprovalExpirySeconds = 900
	DefaultApprovalWaitSeconds   = 30
	maxApproverGroups            = 16
)

// compileApproval checks a hook's approval and fills in its defaults. Only a
// BeforeToolCall hook asks about a call, so only it may carry one.
func compileApproval(a *contract.HookApproval, event vocab.HookEvent, p *field.Path) (*contract.HookApproval, field.ErrorList) {
	if a == nil {
		return nil, nil
	}
	var errs field.ErrorList
	out := a.Clone()
	if event != vocab.BeforeToolCall {
		errs = append(errs, field.Invalid(p, "approval", "approval applies to BeforeToolCall hooks only"))
	}
	switch n := len(out.ApproverGroups); {
	case n == 0:
		errs = append(errs, field.Required(p.Child("approverGroups"), "name at least one group whose members decide"))
	case n > maxApproverGroups:
		errs = append(errs, field.TooMany(p.Child("approverGroups"), n, maxApproverGroups))
	}
	for i, g := range out.ApproverGroups {
		switch {
		case g == "" || len(g) > 256 || slices.Index(out.ApproverGroups, g) != i:
			errs = append(errs, field.Invalid(p.Child("approverGroups").Index(i), g, "must be 1-256 characters and listed once"))
		case workloadGroup(g):
			errs = append(errs, field.Invalid(p.Child("approverGroups").Index(i), g,
				"every workload (or everyone) is in this group, so a tenant's other ServiceAccount could approve its agent's calls; name a group of people"))
		}
	}
	if out.Route == "" {
		out.Route = contract.ApprovalRouteHeadless
	}
	if out.Route != contract.ApprovalRouteCluster && out.Route != contract.ApprovalRouteHeadless {
		errs = append(errs, field.NotSupported(p.Child("route"), out.Route, []string{contract.ApprovalRouteCluster, contract.ApprovalRouteHeadless}))
	}
	if out.ExpirySeconds == 0 {
		out.ExpirySeconds = DefaultApprovalExpirySeconds
	}
	if out.WaitSeconds == 0 {
		out.WaitSeconds = DefaultApprovalWaitSeconds
	}
	if out.ExpirySeconds < 10 || out.ExpirySeconds > 86400 {
		errs = append(errs, field.Invalid(p.Child("expirySeconds"), out.ExpirySeconds, "must be between 10 and 86400"))
	}
	if out.WaitSeconds < 1 || out.WaitSeconds > 600 {
		errs = append(errs, field.Invalid(p.Child("waitSeconds"), out.WaitSeconds, "must be between 1 and 600"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// RunApproved runs a call whose ask an approver approved: d is the
// Decision ExecuteDecided returned with Ask set, approved for d.Call
// exactly; the core runs once on d.Call, then the after hooks, as for an
// allowed call.
func (h *Host) RunApproved(ctx context.Context, d Decision, core CoreFunc) (ToolResult, Decision) {
	d.Blocked, d.Verdict.Outcome = nil, verdict.Allow
	return h.run(ctx, h.reg.Load(), newView(ctx, d.Call, h.workspace), d, core)
}

// workloadGroup reports a group the API server puts ServiceAccounts (or
// everyone) in: never an approver group.
func workloadGroup(g string) bool {
	return g == "system:authenticated" || g == "system:unauthenticated" || g == "system:serviceaccounts" ||
		strings.HasPrefix(g, "system:serviceaccounts:") || strings.HasPrefix(g, "system:nodes")
}
