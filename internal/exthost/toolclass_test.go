package exthost

import (
	"context"
	"slices"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// TestExecute_HookOnAClassRunsForEveryAgentsToolOfIt_RHK1: match.tools
// [shell] runs the hook for Pi's bash, Claude Code's and Codex's Bash and
// Codex's exec_command, in any case; an exact name keeps matching only that
// tool, in any case; other tools never see the hook.
func TestExecute_HookOnAClassRunsForEveryAgentsToolOfIt_RHK1(t *testing.T) {
	for _, tc := range []struct {
		tools   []string
		runs    []string
		skipped []string
	}{
		{[]string{"shell"}, []string{"bash", "Bash", "BASH", "exec_command", "PowerShell"}, []string{"Write", "read", "review_note"}},
		{[]string{"Bash"}, []string{"Bash", "bash"}, []string{"exec_command", "PowerShell"}},
		{[]string{"edit", "write"}, []string{"edit", "Edit", "MultiEdit", "Write", "apply_patch"}, []string{"Read", "bash"}},
		{[]string{"Review_Note"}, []string{"review_note"}, []string{"review"}},
	} {
		h := newTestHost()
		deny := &recorder{verdict: Verdict{Message: "no"}}
		mustLoad(t, h, factorySource("guard", nil, hookFactory(Hook{Name: "g", Event: vocab.BeforeToolCall, Tools: tc.tools, Handler: deny})))
		core := &coreCounter{}
		for _, name := range tc.runs {
			if r, _ := h.Execute(context.Background(), call("1", name, ""), core.run); !r.IsError || r.Details["hook"] != "g" {
				t.Errorf("match.tools %v: %s ran without the hook: %+v", tc.tools, name, r)
			}
		}
		for _, name := range tc.skipped {
			if r, _ := h.Execute(context.Background(), call("2", name, ""), core.run); r.IsError {
				t.Errorf("match.tools %v: the hook ran for %s", tc.tools, name)
			}
		}
		if got := deny.calls.Load(); int(got) != len(tc.runs) {
			t.Errorf("match.tools %v: hook ran %d times, want %d", tc.tools, got, len(tc.runs))
		}
	}
}

// TestExecute_DenyingAClassDeniesEveryAgentsToolOfIt_REXT5: a deny list
// naming a class refuses every tool of it, whoever registered it and in any
// case, keeps it out of the published registry, and publishes the list as
// written.
func TestExecute_DenyingAClassDeniesEveryAgentsToolOfIt_REXT5(t *testing.T) {
	h := NewHost(Options{
		Builtin:   []contract.Tool{{Name: "Bash"}, {Name: "Read"}, {Name: "apply_patch"}},
		Deny:      []string{"shell", "WRITE"},
		Workspace: testWorkspace,
	})
	hook := allow()
	mustLoad(t, h, factorySource("ext", nil, func(api API) error {
		api.RegisterTool(Tool{Name: "bash"}) // an extension's tool named like Pi's shell
		api.On(Hook{Name: "b", Event: vocab.BeforeToolCall, Handler: hook})
		return nil
	}))
	core := &coreCounter{}
	for _, name := range []string{"bash", "Bash", "exec_command", "Monitor", "write", "Write", "apply_patch"} {
		c := call("id", name, "")
		r, _ := h.Execute(context.Background(), c, core.run)
		assertPaired(t, c, r)
		if r.Details["policy"] != "deny" {
			t.Errorf("%s: %+v, want denied by policy", name, r)
		}
	}
	if r, _ := h.Execute(context.Background(), call("id", "Read", ""), core.run); r.IsError {
		t.Errorf("Read is not in a denied class but was refused: %+v", r)
	}
	if core.calls.Load() != 1 || hook.calls.Load() != 1 {
		t.Errorf("core ran %d times and the hook %d, want once each (Read)", core.calls.Load(), hook.calls.Load())
	}
	reg := h.Registry()
	var published []string
	for _, tool := range reg.Tools {
		published = append(published, tool.Name)
	}
	if !slices.Equal(published, []string{"Read"}) {
		t.Errorf("published tools %v, want only Read: denied tools are not offered", published)
	}
	if !slices.Equal(reg.Deny, []string{"WRITE", "shell"}) {
		t.Errorf("published deny list %v, want it as written", reg.Deny)
	}
}
