package claudecode

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// A Stop hook that denies ends the turn with its message: Claude Code does
// not stop, the model gets the hook's message, and once its answer holds
// DONE the hook lets it stop (stop_hook_active would too).
func TestClaudeCode_StopHookKeepsTheAgentGoing(t *testing.T) { // R-LC-5
	for _, wiring := range []Wiring{HTTPHook, CommandHook} {
		t.Run(string(wiring), func(t *testing.T) {
			a := newHookedAgent(t, wiring, agenttest.PiFixture("surface"),
				Turn{Text: "I edited the file."}, Turn{Text: "Checks pass. DONE"})
			out := a.Run(t, "edit the file")
			reqs := a.Model.AgentRequests()
			if len(reqs) != 2 {
				t.Fatalf("the model got %d agent requests, want 2 (the prompt, then the Stop hook's message)", len(reqs))
			}
			if !strings.Contains(reqs[1].Raw, "STOP-HOOK: run the checks, then answer DONE") {
				t.Errorf("the Stop hook's message did not reach the model: %s", reqs[1].Raw)
			}
			if !strings.Contains(out, "Checks pass. DONE") {
				t.Errorf("claude -p ended with %q, want the answer after the Stop hook", out)
			}
		})
	}
}
