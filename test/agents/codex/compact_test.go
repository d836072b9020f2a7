package codex

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/responses"
)

// The real Codex compacts (its token limit set to 1, so the first tool turn
// passes it) and runs the Workspace's BeforeCompact hooks at its PreCompact
// event, then its SessionEnd hooks at SessionEnd; every model request runs
// the BeforeModelRequest hooks (Codex's PreModelRequest). The lifecycle fixture's
// no-compaction hook denies: Codex accepts no decision from a PreCompact
// hook (a "block" answer fails the hook), so the compaction goes on and the
// denial is reported, not enforced (docs/agents.md#codex).
func TestCodex_PreCompactRunsTheBeforeCompactHooks_RLC4(t *testing.T) {
	s := newLifecycleSession(t)
	s.args = append(s.args, "-c", "model_auto_compact_token_limit=1")
	model := responses.Start(t, responses.Shell("call_1", "echo hi"), responses.Say("summary of the work"), responses.Say("done"))
	out := s.run(t, model, "say hi")
	for _, want := range []string{"hook: PreCompact Completed", "context compacted", "hook: PreModelRequest Completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("codex exec output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clamping") {
		t.Errorf("Codex warns of a hook timeout:\n%s", out)
	}
	log := s.hostd.Log()
	for _, want := range []string{`"event":"BeforeCompact","verdict":"stopped","reason":"hook","hooks":[{"extension":"lifecycle","hook":"no-compaction"`, `"event":"SessionEnd"`, `"event":"BeforeModelRequest"`} {
		if !strings.Contains(log, want) {
			t.Errorf("hostd's ledger lacks %s:\n%s", want, log)
		}
	}
}
