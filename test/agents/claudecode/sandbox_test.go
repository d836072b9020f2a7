package claudecode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// With a declared sandbox, the managed settings switch Claude Code's own
// sandbox on: every line of issue 42 that deleted a tree past the shell
// guard and every deleting line of the guard's corpus (round 4's spellings
// of rm -r among them), run by Claude Code's Bash in the tree declared "no
// remove", leaves it intact; a Bash write outside the declared paths fails; Claude Code's
// Write tool still writes in the tree.
func TestClaudeCode_OwnSandboxKeepsATreeDeclaredNoRemove_Issue42(t *testing.T) {
	for _, p := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s (hack/sandbox-deps.sh installs it): Claude Code's sandbox cannot start here, and with the declared sandbox it refuses to start (TestClaudeCode_RefusesToStartWithoutItsSandbox)", p)
		}
	}
	protected, x := agenttest.ProtectedTree(t)
	outside, _ := agenttest.ProtectedTree(t) // declared nowhere
	var tools []ToolUse
	lines := agenttest.Runnable(shellcorpus.Deleting())
	for i, l := range lines {
		tools = append(tools, ToolUse{ID: fmt.Sprintf("toolu_del%d", i), Name: "Bash", Input: map[string]any{"command": "cd " + protected + " && " + l.Line, "description": "clean"}})
	}
	tools = append(tools,
		ToolUse{ID: "toolu_out", Name: "Bash", Input: map[string]any{"command": "echo x > " + filepath.Join(outside, "escape"), "description": "write"}},
		ToolUse{ID: "toolu_edit", Name: "Write", Input: map[string]any{"file_path": filepath.Join(protected, "x", "new.txt"), "content": "edited\n"}})
	a := NewAgentOn(t, agenttest.SandboxedSamples(t, protected), HTTPHook, Turn{Text: "cleaning", Tools: tools})
	a.Run(t, "clean up the tree")
	results := a.Model.ToolResults()
	agenttest.TreeIntact(t, protected, x, results)
	if b, err := os.ReadFile(filepath.Join(protected, "x", "new.txt")); err != nil || string(b) != "edited\n" {
		t.Errorf("x/new.txt %q, %v: the Write tool's edit did not land: %+v", b, err, results["toolu_edit"])
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); err == nil {
		t.Errorf("Bash wrote outside the declared paths: %+v", results["toolu_out"])
	}
	ran := 0
	for id, r := range results {
		if strings.HasPrefix(id, "toolu_del") && strings.Contains(r.Text, "Read-only file system") {
			ran++
		}
	}
	if ran == 0 {
		t.Errorf("no deletion line reached the sandbox (all refused before running?): %+v", results)
	}
	t.Logf("%d of %d deletion lines ran and met Claude Code's sandbox; the others were refused before running (the guard, or Claude Code's own permission rules)", ran, len(lines))
}

// With a declared sandbox and Claude Code's sandbox unable to start (no
// bubblewrap on the PATH), Claude Code refuses to start: no unsandboxed
// fallback (failIfUnavailable).
func TestClaudeCode_RefusesToStartWithoutItsSandbox(t *testing.T) {
	protected, _ := agenttest.ProtectedTree(t)
	a := NewAgentOn(t, agenttest.SandboxedSamples(t, protected), HTTPHook, Turn{Text: "hi"})
	// A PATH without bwrap and socat: Claude Code looks them up there.
	bin := t.TempDir()
	for _, p := range []string{"sh", "bash", "git", "rg", "unshare", "mount", "env"} {
		if path, err := exec.LookPath(p); err == nil {
			resourcestest.Symlink(t, path, filepath.Join(bin, p))
		}
	}
	for i, e := range a.Session.Env {
		if strings.HasPrefix(e, "PATH=") {
			a.Session.Env[i] = "PATH=" + filepath.Dir(agenttest.Loadout(t)) + string(os.PathListSeparator) + bin
		}
	}
	out, stderr, err := a.Session.Run(t, "hello")
	if err == nil && !strings.Contains(out+stderr, "sandbox required but unavailable") {
		t.Fatalf("Claude Code started without its sandbox:\n%s\n%s", out, stderr)
	}
	if !strings.Contains(out+stderr, "sandbox required but unavailable") {
		t.Errorf("want Claude Code's refusal naming the sandbox; got %v\n%s\n%s", err, out, stderr)
	}
	if len(a.Model.AgentRequests()) != 0 {
		t.Error("the model was asked: the session ran")
	}
}
