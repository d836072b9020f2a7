package exthost

import (
	"context"
	"slices"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// TestExecute_HookOnAClassRunsForEveryAgentsToolOfIt_RHK1: match.tools
// [shell] runs the hook for Pi's bash, Claude Code's and Codex's Bash and
// Codex's exec_command, in any case; an exact name keeps matching only that
// tool, in any case; other tools never see the hook. Which names a list
// covers is toolclass's (TestMatcher_ClassesAndNamesMatchCaseInsensitively
// holds these lists' cases); here the hook must run for exactly the calls
// toolclass matches.
func TestExecute_HookOnAClassRunsForEveryAgentsToolOfIt_RHK1(t *testing.T) {
	names := []string{"bash", "Bash", "BASH", "exec_command", "PowerShell", "Write", "read", "Read",
		"edit", "Edit", "MultiEdit", "apply_patch", "review_note", "review"}
	for _, tools := range [][]string{{"shell"}, {"Bash"}, {"edit", "write"}, {"Review_Note"}} {
		h := newTestHost()
		deny := &recorder{verdict: Verdict{Message: "no"}}
		mustLoad(t, h, factorySource("guard", nil, hookFactory(Hook{Name: "g", Event: vocab.BeforeToolCall, Tools: tools, Handler: deny})))
		m := toolclass.NewMatcher(tools)
		core := &coreCounter{}
		matched := 0
		for _, name := range names {
			r, _ := h.Execute(context.Background(), call("1", name, ""), core.run)
			ran := r.IsError && r.Details["hook"] == "g"
			if ran != m.Match(name) {
				t.Errorf("match.tools %v: %s: hook ran = %v, toolclass matches = %v (%+v)", tools, name, ran, m.Match(name), r)
			}
			if m.Match(name) {
				matched++
			}
		}
		if got := deny.calls.Load(); int(got) != matched {
			t.Errorf("match.tools %v: hook ran %d times, want %d", tools, got, matched)
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
