package exthost

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// A hook's approval is checked where it compiles (the controller and
// hostd alike): defaults filled in; a group every workload is in, another
// event, or bounds out of range refused naming the field.
func TestCompileApproval_DefaultsAndRefusals(t *testing.T) {
	p := field.NewPath("spec", "hooks").Index(0).Child("approval")
	got, errs := compileApproval(&contract.HookApproval{ApproverGroups: []string{"platform:approvers"}}, vocab.BeforeToolCall, p)
	if len(errs) != 0 || got.Route != contract.ApprovalRouteHeadless || got.ExpirySeconds != DefaultApprovalExpirySeconds || got.WaitSeconds != DefaultApprovalWaitSeconds {
		t.Fatalf("defaults: %+v %v", got, errs)
	}
	for _, tc := range []struct {
		name  string
		a     contract.HookApproval
		event vocab.HookEvent
		want  string
	}{
		{"no group", contract.HookApproval{}, vocab.BeforeToolCall, "approverGroups: Required"},
		{"every ServiceAccount", contract.HookApproval{ApproverGroups: []string{"system:serviceaccounts"}}, vocab.BeforeToolCall, "approverGroups[0]"},
		{"a namespace's ServiceAccounts", contract.HookApproval{ApproverGroups: []string{"ok", "system:serviceaccounts:team-a"}}, vocab.BeforeToolCall, "approverGroups[1]"},
		{"everyone", contract.HookApproval{ApproverGroups: []string{"system:authenticated"}}, vocab.BeforeToolCall, "name a group of people"},
		{"twice", contract.HookApproval{ApproverGroups: []string{"a", "a"}}, vocab.BeforeToolCall, "listed once"},
		{"another event", contract.HookApproval{ApproverGroups: []string{"a"}}, vocab.UserInput, "BeforeToolCall hooks only"},
		{"an unknown route", contract.HookApproval{ApproverGroups: []string{"a"}, Route: "Email"}, vocab.BeforeToolCall, "route"},
		{"a day and more", contract.HookApproval{ApproverGroups: []string{"a"}, ExpirySeconds: 90000}, vocab.BeforeToolCall, "expirySeconds"},
		{"a wait of an hour", contract.HookApproval{ApproverGroups: []string{"a"}, WaitSeconds: 3600}, vocab.BeforeToolCall, "waitSeconds"},
	} {
		if _, errs := compileApproval(&tc.a, tc.event, p); !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, errs, tc.want)
		}
	}
}
