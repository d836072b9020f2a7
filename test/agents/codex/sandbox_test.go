package codex

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
	protected, err := os.MkdirTemp("/var/tmp", "loadout-protected-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(protected) })
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt"} {
		resourcestest.WriteTree(t, protected, map[string]string{f: "keep\n"})
	}
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
	data := agenttest.PreviewSamples(t, filepath.Join(agenttest.RepoRoot(), "config", "samples"), ext)
	notes := agenttest.StartReviewNotes(t, data)
	s := startSession(t, data, notes.HostdArgs...)
	s.notes = notes
	s.linkRequirements(t)
	s.mcp = fmt.Sprintf("\n[mcp_servers.loadout]\nurl = %q\n", s.hostd.URL+"/mcp")
	resourcestest.WriteTree(t, s.etc, map[string]string{"config.toml": s.mcp})
	req, err := os.ReadFile(filepath.Join(s.home, "requirements.toml"))
	if err != nil || !strings.Contains(string(req), `allowed_sandbox_modes = ["read-only", "workspace-write"]`) {
		t.Fatalf("requirements.toml does not pin the sandbox modes (%v):\n%s", err, req)
	}

	var turns []responses.Turn
	var ids []string
	for i, l := range shellcorpus.Issue42 {
		if slices.ContainsFunc(l.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil }) {
			continue
		}
		id := fmt.Sprintf("d%d", i)
		ids = append(ids, id)
		turns = append(turns, responses.Shell(id, "cd "+protected+" && "+l.Line))
	}
	turns = append(turns, responses.Shell("w", "echo x > "+filepath.Join(protected, "x", "escape")), responses.Say("done"))
	model := responses.Start(t, turns...)
	out, _ := s.runErr(t, model, "clean up")
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt"} {
		if b, err := os.ReadFile(filepath.Join(protected, f)); err != nil || string(b) != "keep\n" {
			t.Errorf("%s: %q, %v: Codex ran a deletion unsandboxed\n%s", f, b, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(protected, "x", "escape")); err == nil {
		t.Errorf("Codex wrote outside its writable roots\n%s", out)
	}
}
