package codex

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// newLifecycleSession is Codex on the lifecycle fixture Workspace (the Pi
// package's, integrations/pi/test/fixtures/lifecycle), managed install
// only, with a stand-in terraform on PATH that records its arguments in the
// working directory's TERRAFORM_ARGS.
func newLifecycleSession(t *testing.T) *session {
	t.Helper()
	return newFixtureSession(t, "lifecycle")
}

// newFixtureSession is newLifecycleSession on the Pi package's fixture
// Workspace of that name.
func newFixtureSession(t *testing.T, fixture string) *session {
	t.Helper()
	if !managedInstall() {
		t.Skip("needs a private /etc/codex (unshare --mount)")
	}
	s := startSession(t, agenttest.PreviewSamples(t, agenttest.PiFixture(fixture)))
	// The managed hooks are the tree's own requirements.toml, at every
	// event Loadout wires (materialize.CodexHookEvents).
	s.linkRequirements(t)
	// Codex runs commands in a login shell, which sets PATH from the
	// profiles: the stand-in joins it from the session's own.
	bin := agenttest.TerraformStandIn(t)
	home := resourcestest.Tree(t, map[string]string{".bash_profile": "export PATH=" + bin + ":$PATH\n"})
	s.env = []string{"HOME=" + home}
	return s
}

// A UserInput hook denies a prompt with a secret: nothing reaches the model.
// The same for a prompt a hook rewrites: Codex cannot replace a prompt.
func TestCodex_UserInputDeniesASecretPrompt(t *testing.T) { // R-LC-4
	for name, prompt := range map[string]string{"deny": "deploy with the SECRET hunter2", "rewrite": "the password is hunter2"} {
		t.Run(name, func(t *testing.T) {
			s := newLifecycleSession(t)
			model := responses.Start(t, responses.Say("should not be called"))
			out, _ := s.runErr(t, model, prompt)
			for _, r := range model.Requests() {
				if strings.Contains(r.Text(), "hunter2") {
					t.Fatalf("the prompt reached the model: %s", r.Text())
				}
			}
			// codex exec prints that the hook blocked the prompt, not its reason.
			if !strings.Contains(out, "UserPromptSubmit Blocked") {
				t.Errorf("Codex did not block the prompt:\n%s", out)
			}
		})
	}
}

// SessionStart's and BeforeAgentStart's context reach the model.
func TestCodex_SessionStartAndTurnContextReachTheModel(t *testing.T) {
	s := newLifecycleSession(t)
	model := responses.Start(t, responses.Say("done"))
	s.run(t, model, "hello there")
	reqs := model.Requests()
	if len(reqs) == 0 {
		t.Fatal("Codex sent the model no request")
	}
	for _, want := range []string{"TENANT-CONTEXT: you work for namespace team-a", "TURN-CONTEXT for: hello there"} {
		if !strings.Contains(reqs[0].Text(), want) {
			t.Errorf("%q did not reach the model", want)
		}
	}
}

// A BeforeToolCall rewrite is what runs (terraform apply gains -dry-run) and
// what the after hooks see; an ask is a denial with its message (Codex
// refuses "ask").
func TestCodex_BeforeToolCallRewriteRunsAndAskDenies(t *testing.T) {
	s := newLifecycleSession(t)
	model := responses.Start(t, responses.Shell("call_tf", "terraform apply"), responses.Shell("call_ask", "echo deploy > deployed.txt"), responses.Say("done"))
	out := s.run(t, model, "apply, then deploy")
	agenttest.TerraformRanWith(t, s.work, "apply -dry-run", out)
	agenttest.NoFileLeft(t, filepath.Join(s.work, "deployed.txt"), "the asked call ran", "")
	model.MustHaveGot(t, "call_ask", "ASK: deploys need a human", out)
}
