package hostd

import (
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// TestBefore_ClassesAndCaseHoldForHooksAndDenyLists_RHK1_REXT5: through
// hostd, a hook on the shell class runs for every agent's shell name in any
// case, a hook naming a tool matches it in any case, and a deny list naming a
// class refuses every tool of it (docs/agents.md, One tool vocabulary).
func TestBefore_ClassesAndCaseHoldForHooksAndDenyLists_RHK1_REXT5(t *testing.T) {
	reg := fixedRegistry()
	reg.Deny = []string{"write"}
	reg.Hooks = append(reg.Hooks,
		contract.Hook{Extension: "platform-guard", Name: "no-sudo", Event: contract.EventBeforeToolCall, Tools: []string{"shell"}, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "!call.arguments.command.startsWith('sudo')", Message: "no sudo"}})
	reg.Hooks[0].Tools = []string{"Review_Note"}
	_, ts, _ := newTestServer(t, reg)
	before := func(name, args string) BeforeResponse {
		t.Helper()
		var out BeforeResponse
		if code := post(t, ts.URL+"/v1/before", `{"call":{"id":"1","name":"`+name+`","arguments":`+args+`}}`, &out); code != 200 {
			t.Fatalf("%s: status %d", name, code)
		}
		return out
	}
	for _, shell := range []string{"bash", "Bash", "BASH", "exec_command", "Monitor"} {
		if out := before(shell, `{"command":"sudo ls"}`); out.Allowed || out.Result == nil || out.Result.Details["hook"] != "no-sudo" {
			t.Errorf("%s running sudo: %+v, want denied by the shell hook", shell, out)
		}
		if out := before(shell, `{"command":"ls"}`); !out.Allowed {
			t.Errorf("%s running ls: %+v, want allowed", shell, out)
		}
	}
	if out := before("review_note", `{"text":"a SECRET"}`); out.Allowed || out.Result.Details["hook"] != "no-secrets" {
		t.Errorf("match.tools [Review_Note] did not run for review_note: %+v", out)
	}
	for _, w := range []string{"write", "Write", "apply_patch"} {
		if out := before(w, `{}`); out.Allowed || out.Result.Details["policy"] != "deny" {
			t.Errorf("deny [write]: %s %+v, want denied by policy", w, out)
		}
	}
	if out := before("Read", `{"command":"sudo"}`); !out.Allowed {
		t.Errorf("Read is neither denied nor hooked: %+v", out)
	}
}
