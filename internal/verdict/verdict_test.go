package verdict

import (
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// The one rule, as a table: each row runs its hooks' verdicts in run order
// (tenants first, the platform last, as the host runs them) through
// Combine and names the hook that decides (docs/hooks.md, "Combining
// verdicts").
func TestCombine_OneRule(t *testing.T) {
	cluster := &contract.HookApproval{ApproverGroups: []string{"platform:approvers"}, Route: contract.ApprovalRouteCluster}
	var (
		allow          = Verdict{}
		tenantAsk      = Verdict{Outcome: Ask, Extension: "tenant", Hook: "confirm", Reason: "routine confirmation, just say yes"}
		tenantAskOwn   = Verdict{Outcome: Ask, Extension: "tenant", Hook: "own-approvers", Approval: cluster}
		tenantDeny     = Verdict{Outcome: Deny, Extension: "tenant", Hook: "no", Cause: CauseHook}
		platformAsk    = Verdict{Outcome: Ask, Extension: "platform", Hook: "ask", Imposed: true}
		platformApv    = Verdict{Outcome: Ask, Extension: "platform", Hook: "apply-needs-approval", Imposed: true, Approval: cluster}
		platformApv2   = Verdict{Outcome: Ask, Extension: "platform", Hook: "second", Imposed: true, Approval: cluster}
		platformDeny   = Verdict{Outcome: Deny, Extension: "platform", Hook: "guard", Imposed: true, Cause: CauseHook}
		platformFailed = Verdict{Outcome: Deny, Extension: "platform", Hook: "broken", Imposed: true, Cause: CauseHookFailure}
	)
	for _, tc := range []struct {
		name  string
		run   []Verdict
		want  Verdict
		route bool // the approvers decide
	}{
		{"nothing said", []Verdict{allow, allow}, allow, false},
		{"a tenant's ask is the user's", []Verdict{tenantAsk, allow}, tenantAsk, false},
		{"a tenant's ask cannot hide the platform's ask with approval", []Verdict{tenantAsk, platformApv}, platformApv, true},
		{"a tenant's ask cannot hide the platform's plain ask", []Verdict{tenantAsk, platformAsk}, platformAsk, false},
		{"a tenant's approvers are not honoured", []Verdict{tenantAskOwn, allow}, tenantAskOwn, false},
		{"a tenant's approvers rank as a tenant's ask", []Verdict{tenantAskOwn, platformAsk}, platformAsk, false},
		{"the platform's approval outranks its plain ask", []Verdict{platformAsk, platformApv}, platformApv, true},
		{"of two platform approvals the first", []Verdict{platformApv, platformApv2}, platformApv, true},
		{"of two tenant asks the first", []Verdict{tenantAsk, tenantAskOwn}, tenantAsk, false},
		{"a platform deny beats a tenant's ask", []Verdict{tenantAsk, platformDeny}, platformDeny, false},
		{"a platform deny beats the platform's approval", []Verdict{platformApv, platformDeny}, platformDeny, false},
		{"a platform failure blocks like its deny", []Verdict{tenantAsk, platformFailed}, platformFailed, false},
		{"a platform deny beats a tenant's deny", []Verdict{tenantDeny, platformDeny}, platformDeny, false},
		{"a tenant's deny blocks an approval-ask", []Verdict{tenantDeny, platformApv}, tenantDeny, false},
		{"a later allow changes nothing", []Verdict{platformApv, allow}, platformApv, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Verdict{}
			for _, v := range tc.run {
				got = Combine(got, v)
			}
			if got.Decider() != tc.want.Decider() || got.Outcome != tc.want.Outcome {
				t.Fatalf("decided by %q (%s), want %q (%s)", got.Decider(), got.Outcome, tc.want.Decider(), tc.want.Outcome)
			}
			if (got.ApprovalRoute() != nil) != tc.route {
				t.Fatalf("approval route = %+v, want approvers deciding: %v", got.ApprovalRoute(), tc.route)
			}
		})
	}
}

func TestVerdict_DeciderAndOutcomeNames(t *testing.T) {
	if d := (Verdict{}).Decider(); d != "" {
		t.Errorf("no hook's Decider = %q", d)
	}
	if d := (Verdict{Extension: "e", Hook: "h"}).Decider(); d != "e/h" {
		t.Errorf("Decider = %q", d)
	}
	for o, want := range map[Outcome]string{Allow: "allow", Ask: "ask", Deny: "deny"} {
		if o.String() != want {
			t.Errorf("%d = %q, want %q", o, o.String(), want)
		}
	}
}
