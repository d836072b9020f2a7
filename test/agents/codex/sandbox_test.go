package codex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// With a declared sandbox, requirements.toml pins Codex's sandbox modes:
// asked for danger-full-access, Codex runs sandboxed anyway, so every line
// of issue 42 that deleted a tree past the shell guard leaves a tree outside
// its writable roots intact, and a write there fails.
func TestCodex_RequirementsPinTheSandboxAgainstIssue42(t *testing.T) {
	if !managedInstall() {
		t.Skip("no private /etc/codex here (unshare --mount refused): requirements.toml cannot be installed")
	}
	protected := agenttest.ProtectedTree(t)
	s := newSessionOn(t, agenttest.SandboxedSamples(t, protected))
	req, err := os.ReadFile(filepath.Join(s.home, "requirements.toml"))
	if err != nil || !strings.Contains(string(req), `allowed_sandbox_modes = ["read-only", "workspace-write"]`) {
		t.Fatalf("requirements.toml does not pin the sandbox modes (%v):\n%s", err, req)
	}

	var turns []responses.Turn
	for i, l := range shellcorpus.Issue42 {
		if slices.ContainsFunc(l.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil }) {
			continue
		}
		turns = append(turns, responses.Shell(fmt.Sprintf("d%d", i), "cd "+protected+" && "+l.Line))
	}
	turns = append(turns, responses.Shell("w", "echo x > "+filepath.Join(protected, "x", "escape")), responses.Say("done"))
	model := responses.Start(t, turns...)
	out, _ := s.runErr(t, model, "clean up")
	agenttest.TreeIntact(t, protected, out)
	if _, err := os.Stat(filepath.Join(protected, "x", "escape")); err == nil {
		t.Errorf("Codex wrote outside its writable roots\n%s", out)
	}
}
