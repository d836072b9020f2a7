package hostd

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testenv"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/approval/approvaltest"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ledger"
)

// approvalRegistry asks about terraform apply: the platform's hook with an
// approval, and a tenant's hook that names approvers too (ignored: a tenant
// does not choose who approves its calls).
func approvalRegistry(route string) contract.Registry {
	ask := func(ext, name, prefix string, imposed bool) contract.Hook {
		return contract.Hook{Extension: ext, Name: name, Event: contract.EventBeforeToolCall, TimeoutSeconds: 10, Imposed: imposed,
			CEL:      &contract.CELHook{Expression: "call.arguments.command.startsWith('" + prefix + "') ? {'ask': true, 'message': 'sure?'} : {}"},
			Approval: &contract.HookApproval{ApproverGroups: []string{"platform:approvers"}, Route: route, ExpirySeconds: 60, WaitSeconds: 1}}
	}
	return contract.Registry{
		Tools:      []contract.Tool{{Name: "bash", Builtin: true}},
		Hooks:      []contract.Hook{ask("tenant-ext", "tenant-ask", "make deploy", false), ask("platform-guard", "apply-ask", "terraform apply", true)},
		Extensions: []string{"tenant-ext", "platform-guard"},
	}
}

func approvalServer(t *testing.T, route string, broker *approval.Broker) (*httptest.Server, *testenv.SyncBuffer) {
	t.Helper()
	sink := &testenv.SyncBuffer{}
	_, ts, _ := serveContext(t, contextData(t, approvalRegistry(route)), Options{Ledger: ledger.NewWriter(sink), Approvals: broker})
	return ts, sink
}

func bashCall(id, command string, headless bool) map[string]any {
	return map[string]any{"acceptArguments": true, "headless": headless,
		"call": map[string]any{"id": id, "name": "bash", "arguments": map[string]any{"command": command}}}
}

// An imposed hook's ask that goes to the cluster blocks, naming why, when
// hostd cannot reach the cluster; an ask routed Headless stays the agent's
// when the agent has a user; a tenant's hook's approval is never honoured:
// its ask stays the agent's (R-APV-1).
func TestApprovals_WithoutTheClusterTheAskBlocksNamingWhy(t *testing.T) { // R-APV-1
	for _, tc := range []struct {
		name     string
		route    string
		broker   *approval.Broker
		command  string
		headless bool
		want     BeforeResponse
		text     string
	}{
		{"no --approvals", contract.ApprovalRouteCluster, nil, "terraform apply", false, BeforeResponse{}, "no access to the cluster (--approvals)"},
		{"a broken configuration", contract.ApprovalRouteCluster, approval.Broken(errors.New("approvals: KUBERNETES_SERVICE_HOST is not set")), "terraform apply", true,
			BeforeResponse{}, "hostd could not ask: approvals: KUBERNETES_SERVICE_HOST is not set"},
		{"route Headless, an agent with a user", contract.ApprovalRouteHeadless, nil, "terraform apply", false, BeforeResponse{Ask: true}, "sure?"},
		{"route Headless, a headless agent", contract.ApprovalRouteHeadless, nil, "terraform apply", true, BeforeResponse{}, "no access to the cluster"},
		{"a tenant's hook", contract.ApprovalRouteCluster, nil, "make deploy", true, BeforeResponse{Ask: true}, "sure?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, sink := approvalServer(t, tc.route, tc.broker)
			var got BeforeResponse
			post(t, ts.URL+"/v1/before", bashCall("1", tc.command, tc.headless), &got)
			if got.Allowed || got.Ask != tc.want.Ask || got.Result == nil || !strings.Contains(got.Result.Content[0].Text, tc.text) {
				t.Fatalf("answer = %+v, want ask=%v naming %q", got, tc.want.Ask, tc.text)
			}
			var rec ledger.Record
			if err := json.Unmarshal([]byte(strings.TrimSpace(sink.String())), &rec); err != nil {
				t.Fatal(err)
			}
			if tc.want.Ask != (rec.Approval == nil) {
				t.Errorf("ledger approval = %+v", rec.Approval)
			}
			if rec.Approval != nil && (rec.Approval.Decision != approval.Unavailable || rec.Reason != "approval" || rec.Verdict != "blocked") {
				t.Errorf("ledger record = %+v", rec)
			}
		})
	}
}

// Every hook that ran is in the record with its outcome and time, the ones
// that allowed too, in the order they ran.
func TestLedger_EveryHookRunIsRecordedWithItsOutcome(t *testing.T) {
	ts, sink := approvalServer(t, contract.ApprovalRouteHeadless, nil)
	var got BeforeResponse
	post(t, ts.URL+"/v1/before", bashCall("1", "ls", false), &got)
	post(t, ts.URL+"/v1/before", bashCall("2", "make deploy", false), &got)
	lines := strings.Split(strings.TrimSpace(sink.String()), "\n")
	want := [][]string{{"tenant-ask:allowed", "apply-ask:allowed"}, {"tenant-ask:asked", "apply-ask:allowed"}}
	for i, l := range lines {
		var rec ledger.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		var runs []string
		for _, h := range rec.Hooks {
			runs = append(runs, h.Hook+":"+h.Outcome)
			if h.Micros < 0 {
				t.Errorf("hook %s: %d µs", h.Hook, h.Micros)
			}
		}
		if strings.Join(runs, ",") != strings.Join(want[i], ",") {
			t.Errorf("record %d hooks = %v, want %v", i+1, runs, want[i])
		}
	}
}

// A runnable tool's call that an imposed hook asks about waits for the
// cluster's approvers inside hostd's tool run (nobody else can be asked
// there); approved, the Service runs once with exactly the approved
// arguments; the spent Approval does not let the same call run again.
func TestApprovals_RunnableToolRunsOnceOnApproval(t *testing.T) { // R-APV-3, R-APV-4
	svc := newToolService(t, recordNote)
	reg := runnableRegistry(svc.URL+"/notes", 5)
	reg.Hooks = append(reg.Hooks, contract.Hook{Extension: "platform-guard", Name: "notes-need-approval", Event: contract.EventBeforeToolCall,
		Tools: []string{"review_note"}, TimeoutSeconds: 10, Imposed: true,
		CEL:      &contract.CELHook{Expression: "{'ask': true, 'message': 'a note to the team?'}"},
		Approval: &contract.HookApproval{ApproverGroups: []string{"platform:approvers"}, Route: contract.ApprovalRouteCluster, ExpirySeconds: 60, WaitSeconds: 1}})
	reg.Extensions = append(reg.Extensions, "platform-guard")
	broker, api := approvaltest.NewBroker(t, nil)
	_, ts, _ := serveContext(t, contextData(t, reg), Options{Approvals: broker})
	call := map[string]any{"id": "t-1", "arguments": map[string]any{"text": "looks good"}}

	_, pending, _ := runTool(t, ts.URL, "review_note", call)
	names := api.Names()
	if pending.Executed || len(names) != 1 || !strings.Contains(pending.Result.Content[0].Text, "waiting for approval "+names[0]) {
		t.Fatalf("before a decision: %+v, Approvals %v", pending, names)
	}
	api.Change(names[0], approvaltest.Approve("alice"))
	_, ran, _ := runTool(t, ts.URL, "review_note", call)
	if !ran.Executed || ran.Result.IsError || svc.calls.Load() != 1 || svc.last.Load().Call.Arguments["text"] != "looks good" {
		t.Fatalf("approved: %+v, the Service saw %d calls", ran, svc.calls.Load())
	}
	_, again, _ := runTool(t, ts.URL, "review_note", call)
	if again.Executed || svc.calls.Load() != 1 || len(api.Names()) != 2 {
		t.Fatalf("the same call after its Approval was spent: %+v, %d Service calls, Approvals %v", again, svc.calls.Load(), api.Names())
	}
}
