package codex

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/responses"
)

// A Stop hook that denies ends the turn with its message: Codex does not
// stop, the model gets the hook's message, and once its answer holds DONE
// the hook lets it stop.
func TestCodex_StopHookKeepsTheAgentGoing(t *testing.T) { // R-LC-5
	s := newFixtureSession(t, "surface")
	model := responses.Start(t, responses.Say("I edited the file."), responses.Say("Checks pass. DONE"))
	out := s.run(t, model, "edit the file")
	reqs := model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the model got %d requests, want the prompt and then the Stop hook's message:\n%s", len(reqs), out)
	}
	if !strings.Contains(reqs[len(reqs)-1].Text(), "STOP-HOOK: run the checks, then answer DONE") {
		t.Errorf("the Stop hook's message did not reach the model: %s", reqs[len(reqs)-1].Text())
	}
	if !strings.Contains(out, "Checks pass. DONE") {
		t.Errorf("codex exec ended with:\n%s\nwant the answer after the Stop hook", out)
	}
}
