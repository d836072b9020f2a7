package claudecode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// sandboxedSamples is the samples' context with a platform extension that
// lets agents edit protected but never delete in it (and write and delete
// in /tmp, where Claude Code keeps its session).
func sandboxedSamples(t *testing.T, protected string) map[string]string {
	t.Helper()
	ext := resourcestest.Tree(t, map[string]string{"sandbox.yaml": `apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: sandbox, namespace: loadout-system}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /, access: [read, execute]}
        - {path: /tmp, access: [read, write, create, remove, execute]}
        - {path: ` + protected + `, access: [read, write, create, execute]}
`})
	return agenttest.PreviewSamples(t, filepath.Join(agenttest.RepoRoot(), "config", "samples"), ext)
}

// protectedTree is a scratch tree x (files two levels deep) outside /tmp, so
// the declaration's /tmp rights do not reach it.
func protectedTree(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "loadout-protected-")
	if err != nil {
		t.Skipf("no /var/tmp for a tree outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// With a declared sandbox, the managed settings switch Claude Code's own
// sandbox on: every line of issue 42 that deleted a tree past the shell
// guard, run by Claude Code's Bash in the tree declared "no remove", leaves
// it intact; a Bash write outside the declared paths fails; Claude Code's
// Write tool still writes in the tree.
func TestClaudeCode_OwnSandboxKeepsATreeDeclaredNoRemove_Issue42(t *testing.T) {
	for _, p := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s (hack/sandbox-deps.sh installs it): Claude Code's sandbox cannot start here, and with the declared sandbox it refuses to start (TestClaudeCode_RefusesToStartWithoutItsSandbox)", p)
		}
	}
	protected, outside := protectedTree(t), protectedTree(t) // outside is declared nowhere
	var tools []ToolUse
	for i, l := range shellcorpus.Issue42 {
		if slices.ContainsFunc(l.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil }) {
			continue
		}
		tools = append(tools, ToolUse{ID: fmt.Sprintf("toolu_del%d", i), Name: "Bash", Input: map[string]any{"command": "cd " + protected + " && " + l.Line, "description": "clean"}})
	}
	tools = append(tools,
		ToolUse{ID: "toolu_out", Name: "Bash", Input: map[string]any{"command": "echo x > " + filepath.Join(outside, "escape"), "description": "write"}},
		ToolUse{ID: "toolu_edit", Name: "Write", Input: map[string]any{"file_path": filepath.Join(protected, "x", "new.txt"), "content": "edited\n"}})
	a := NewAgentOn(t, sandboxedSamples(t, protected), HTTPHook, Turn{Text: "cleaning", Tools: tools})
	a.Run(t, "clean up the tree")
	results := a.Model.ToolResults()
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt"} {
		if b, err := os.ReadFile(filepath.Join(protected, f)); err != nil || string(b) != "keep\n" {
			t.Errorf("%s: %q, %v: the tree declared no-remove lost it\n%+v", f, b, err, results)
		}
	}
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
	t.Logf("%d of %d deletion lines ran and met Claude Code's sandbox; the others were refused before running (the guard, or Claude Code's own permission rules)", ran, len(tools)-2)
}

// With a declared sandbox and Claude Code's sandbox unable to start (no
// bubblewrap on the PATH), Claude Code refuses to start: no unsandboxed
// fallback (failIfUnavailable).
func TestClaudeCode_RefusesToStartWithoutItsSandbox(t *testing.T) {
	protected := protectedTree(t)
	a := NewAgentOn(t, sandboxedSamples(t, protected), HTTPHook, Turn{Text: "hi"})
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
