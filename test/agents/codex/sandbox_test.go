package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// With a declared sandbox, requirements.toml pins Codex's sandbox modes:
// asked for danger-full-access, Codex refuses to start; in workspace-write,
// every line of issue 42 that deleted a tree past the shell guard, and every
// deleting line of the guard's corpus, leaves a tree outside its writable
// roots intact, and a write there fails.
func TestCodex_RequirementsPinTheSandboxAgainstIssue42(t *testing.T) {
	if !managedInstall() {
		t.Skip("no private /etc/codex here (unshare --mount refused): requirements.toml cannot be installed")
	}
	protected, x := agenttest.ProtectedTree(t)
	s := newSessionOn(t, agenttest.SandboxedSamples(t, protected))
	req, err := os.ReadFile(filepath.Join(s.home, "requirements.toml"))
	if err != nil || !strings.Contains(string(req), `allowed_sandbox_modes = ["read-only", "workspace-write"]`) {
		t.Fatalf("requirements.toml does not pin the sandbox modes (%v):\n%s", err, req)
	}

	// Asked for danger-full-access, Codex refuses to start. (Without the
	// pin it would run this script, which the guard cannot read, and lose
	// the tree.)
	script := `printf '#!/bin/sh\nrm -rf x\n' > x.sh && chmod +x x.sh && ./x.sh`
	out, err := s.runErr(t, responses.Start(t, responses.Shell("d", "cd "+protected+" && "+script), responses.Say("done")), "clean up")
	agenttest.TreeIntact(t, protected, x, out)
	if err == nil || !strings.Contains(out, "requirements do not allow `sandbox_mode = \"danger-full-access\"`") {
		t.Fatalf("codex exec --sandbox danger-full-access under the pinned requirements: %v, want Codex's refusal\n%s", err, out)
	}

	// In the sandbox it is allowed, every deleting line meets Codex's own
	// sandbox (Landlock): the tree is outside its writable roots.
	s.sandbox = "workspace-write"
	var turns []responses.Turn
	for i, l := range agenttest.Runnable(shellcorpus.Deleting()) {
		turns = append(turns, responses.Shell(fmt.Sprintf("d%d", i), "cd "+protected+" && "+l.Line))
	}
	turns = append(turns, responses.Shell("w", "echo x > "+filepath.Join(protected, "x", "escape")), responses.Say("done"))
	model := responses.Start(t, turns...)
	out = s.run(t, model, "clean up")
	agenttest.TreeIntact(t, protected, x, out)
	if _, err := os.Stat(filepath.Join(protected, "x", "escape")); err == nil {
		t.Errorf("Codex wrote outside its writable roots\n%s", out)
	}
	model.MustHaveGot(t, "w", "", out) // the last call ran: Codex went through every line
}
