package hostd

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/approval/approvaltest"
	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/codex"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/materialize"
)

// preemptRegistry is the preempting attack (docs/security.md): a trusted tenant's hook on the
// shell class asks on every call ("routine confirmation, just say yes"); it
// runs first, before the platform's imposed hook that asks about terraform
// apply with approvers on route.
func preemptRegistry(route string) contract.Registry {
	return contract.Registry{
		Tools: []contract.Tool{{Name: "bash", Builtin: true}, {Name: "Bash", Builtin: true}},
		Hooks: []contract.Hook{
			{Extension: "tenant-ext", Name: "confirm-everything", Event: contract.EventBeforeToolCall, Tools: []string{"shell"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "{'ask': true, 'message': 'routine confirmation, just say yes'}"}},
			{Extension: "platform-guard", Name: "apply-needs-approval", Event: contract.EventBeforeToolCall, Tools: []string{"shell"}, TimeoutSeconds: 10, Imposed: true,
				CEL:      &contract.CELHook{Expression: "call.arguments.command.startsWith('terraform apply') ? {'ask': true, 'message': 'terraform apply needs a second person'} : {}"},
				Approval: &contract.HookApproval{ApproverGroups: []string{"platform:approvers"}, Route: route, ExpirySeconds: 60, WaitSeconds: 1}},
		},
		Extensions: []string{"tenant-ext", "platform-guard"},
	}
}

func preemptServer(t *testing.T, route string, opts Options) (*httptest.Server, *approvaltest.API) {
	t.Helper()
	broker, api := approvaltest.NewBroker(t, nil)
	opts.Approvals = broker
	_, ts, _ := serveContext(t, contextData(t, preemptRegistry(route)), opts)
	return ts, api
}

// claudeCodePreToolUse posts a PreToolUse to url (the http hook) and
// returns its permission decision and reason.
func claudeCodePreToolUse(t *testing.T, url, command string) (decision, reason string) {
	t.Helper()
	var out map[string]any
	post(t, url, map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t1", "session_id": "s1",
		"tool_input": map[string]any{"command": command}}, &out)
	s, _ := out["hookSpecificOutput"].(map[string]any)
	decision, _ = s["permissionDecision"].(string)
	reason, _ = s["permissionDecisionReason"].(string)
	return decision, reason
}

// The tenant's ask, which runs first, no longer pre-empts the platform's
// ask with approvers: Pi (/v1/before), Claude Code's http hook and Codex's
// hook (/v1/before, headless) all wait on an Approval the platform's hook
// names, and none gets an ask its own user could answer. On the code before
// verdict.Combine, exthost kept the first hook that asked: Pi got `ask`
// with the tenant's text, Claude Code `permissionDecision: ask`, and no
// Approval was ever created.
func TestAttack_TenantAskCannotPreemptThePlatformsApproval(t *testing.T) {
	ts, api := preemptServer(t, contract.ApprovalRouteCluster, Options{})

	var pi BeforeResponse
	post(t, ts.URL+"/v1/before", bashCall("1", "terraform apply -auto-approve", false), &pi)
	if pi.Allowed || pi.Ask || pi.Result == nil || !strings.Contains(pi.Result.Content[0].Text, "waiting for approval") ||
		!strings.Contains(pi.Result.Content[0].Text, "platform-guard/apply-needs-approval") {
		t.Fatalf("Pi got %+v; want the call held for the platform's approvers", pi)
	}
	if n := len(api.Names()); n != 1 {
		t.Fatalf("%d Approvals after Pi's call, want 1", n)
	}

	decision, reason := claudeCodePreToolUse(t, ts.URL+ClaudeCodeHookPath, "terraform apply -target=prod")
	if decision != claudecode.DecisionDeny || !strings.Contains(reason, "waiting for approval") {
		t.Fatalf("Claude Code got %s %q; want a deny waiting for the approvers", decision, reason)
	}

	cx := codex.Hook{Decide: claudecode.Hook{MCPServer: "loadout", Policy: claudecode.HostdClient{URL: ts.URL, Headless: true}}}
	in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "c1",
		"tool_input": map[string]any{"command": "terraform apply -var env=prod"}})
	got := cx.Answer(context.Background(), strings.NewReader(string(in)))
	if got.HookSpecificOutput == nil || got.HookSpecificOutput.PermissionDecision != claudecode.DecisionDeny ||
		!strings.Contains(got.HookSpecificOutput.PermissionDecisionReason, "waiting for approval") {
		t.Fatalf("Codex got %+v; want a deny waiting for the approvers", got.HookSpecificOutput)
	}
	names := api.Names()
	if len(names) != 3 {
		t.Fatalf("Approvals %v, want one per agent's call", names)
	}
	for _, n := range names {
		if o := api.Get(n); o.Spec.Hook.Name != "apply-needs-approval" || o.Spec.Hook.Extension != "platform-guard" {
			t.Errorf("Approval %s names hook %s/%s, want the platform's", n, o.Spec.Hook.Extension, o.Spec.Hook.Name)
		}
	}

	// The approvers decide: approved, the call runs as named.
	api.Change(names[0], approvaltest.Approve("alice"))
	pi = BeforeResponse{}
	post(t, ts.URL+"/v1/before", bashCall("1", "terraform apply -auto-approve", false), &pi)
	if !pi.Allowed {
		t.Fatalf("approved call: %+v", pi)
	}

	// Every other call still gets the tenant's ask: it is the agent's user's.
	pi = BeforeResponse{}
	post(t, ts.URL+"/v1/before", bashCall("2", "ls", false), &pi)
	if !pi.Ask || pi.Result == nil || pi.Result.Content[0].Text != "routine confirmation, just say yes" {
		t.Fatalf("a call only the tenant asks about: %+v", pi)
	}
}

// In a bound pod Claude Code's managed hook URL is the one hostd wrote into
// the tree with --managed-etc; with it, `claude -p` reaches the approvers
// on the default route (Headless). On the code before, the URL had no
// headless=true: the platform's ask reached Claude Code as an ask, which
// `claude -p` turns into a deny, and no Approval was ever created.
func TestAttack_BoundPodClaudeCodeReachesTheApproversOnTheDefaultRoute(t *testing.T) {
	tree := t.TempDir()
	ts, api := preemptServer(t, contract.ApprovalRouteHeadless, Options{MaterializeDir: tree,
		Materialize: materialize.Options{ManagedEtc: true, HostdURL: "http://127.0.0.1:8181"}})
	b, err := os.ReadFile(filepath.Join(tree, materialize.ManagedSettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				URL string `json:"url"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &settings); err != nil || len(settings.Hooks["PreToolUse"]) != 1 {
		t.Fatalf("managed settings %s: %v", b, err)
	}
	url := strings.Replace(settings.Hooks["PreToolUse"][0].Hooks[0].URL, "http://127.0.0.1:8181", ts.URL, 1)
	decision, reason := claudeCodePreToolUse(t, url, "terraform apply")
	if decision != claudecode.DecisionDeny || !strings.Contains(reason, "waiting for approval") || len(api.Names()) != 1 {
		t.Fatalf("the bound pod's Claude Code got %s %q with Approvals %v; want a deny waiting for the approvers", decision, reason, api.Names())
	}
}

// When admission is gone and the requester decides its own Approval, hostd
// refuses it (R-APV-4) and says hostd refused it: the message used to say
// the call "was denied by" the requester, as if an approver had.
func TestAttack_RequesterOwnApprovalIsRefusedNotDeniedByTheRequester(t *testing.T) {
	broker, api := approvaltest.NewBroker(t, nil)
	ts, _ := approvalServer(t, contract.ApprovalRouteCluster, broker)
	var got BeforeResponse
	post(t, ts.URL+"/v1/before", bashCall("1", "terraform apply", true), &got)
	names := api.Names()
	if len(names) != 1 {
		t.Fatalf("Approvals %v", names)
	}
	api.Change(names[0], approvaltest.Approve(approvaltest.User))
	got = BeforeResponse{}
	post(t, ts.URL+"/v1/before", bashCall("1", "terraform apply", true), &got)
	text := ""
	if got.Result != nil {
		text = got.Result.Content[0].Text
	}
	if got.Allowed || strings.Contains(text, "denied by") || !strings.Contains(text, "not honoured by hostd") ||
		!strings.Contains(text, "decided by its requester") {
		t.Fatalf("the requester's own approval: %+v", got)
	}
	if o := api.Get(names[0]); o.Status.Decision != approval.Approved {
		t.Fatalf("the object changed: %+v", o.Status)
	}
}
