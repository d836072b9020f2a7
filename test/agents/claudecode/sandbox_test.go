package claudecode

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// With a declared sandbox, the managed settings switch Claude Code's own
// sandbox on: every line of the sandbox corpus (shellcorpus.Issue42) that deleted a tree past the shell
// guard and every deleting line of the guard's corpus (round 4's spellings
// of rm -r among them), run by Claude Code's Bash in the tree declared "no
// remove", leaves it intact; a Bash write outside the declared paths fails; Claude Code's
// Write tool still writes in the tree.
func TestClaudeCode_OwnSandboxKeepsATreeDeclaredNoRemove_Issue42(t *testing.T) {
	for _, p := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s (hack/apt-install.sh installs it; make test runs it): Claude Code's sandbox cannot start here, and with the declared sandbox it refuses to start (TestClaudeCode_RefusesToStartWithoutItsSandbox)", p)
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
	withoutBubblewrap(t, a.Session)
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

// withoutBubblewrap gives the session a PATH with neither bwrap nor socat
// (Claude Code looks them up there): its sandbox cannot start, as in a pod
// that refuses user namespaces.
func withoutBubblewrap(t *testing.T, s *Session) {
	t.Helper()
	bin := t.TempDir()
	for _, p := range []string{"sh", "bash", "git", "rg", "unshare", "mount", "env", "python3", "perl", "node", "find", "tar", "make",
		"rm", "mkdir", "printf", "chmod", "cat", "ls", "xargs", "sed", "awk", "cp", "ln", "touch", "echo", "timeout", "nice", "nohup", "stdbuf", "setsid", "ionice", "taskset", "flock", "script", "rsync", "zip", "dirname"} {
		if path, err := exec.LookPath(p); err == nil {
			resourcestest.Symlink(t, path, filepath.Join(bin, p))
		}
	}
	for i, e := range s.Env {
		if strings.HasPrefix(e, "PATH=") {
			s.Env[i] = "PATH=" + filepath.Dir(agenttest.Loadout(t)) + string(os.PathListSeparator) + bin
		}
	}
}

// The fallback where Claude Code's bubblewrap cannot run: the platform
// starts the agent under `loadout sandbox` and says so
// (agentsUnderLoadoutSandbox), so Claude Code starts without its own
// sandbox and Landlock holds everything it runs, its own tools included:
// every deleting line leaves the tree intact, and a Write outside the
// declared paths fails. (Its Write tool saves by rename, which a tree
// without remove refuses too.)
func TestClaudeCode_UnderLoadoutSandboxWithoutBubblewrap(t *testing.T) {
	protected, x := agenttest.ProtectedTree(t)
	outside, _ := agenttest.ProtectedTree(t)
	lines := agenttest.Runnable(shellcorpus.Deleting())
	var tools []ToolUse
	for i, l := range lines {
		tools = append(tools, ToolUse{ID: fmt.Sprintf("toolu_del%d", i), Name: "Bash", Input: map[string]any{"command": "cd " + protected + " && " + l.Line, "description": "clean"}})
	}
	tools = append(tools,
		ToolUse{ID: "toolu_out", Name: "Write", Input: map[string]any{"file_path": filepath.Join(outside, "escape"), "content": "x\n"}},
		ToolUse{ID: "toolu_edit", Name: "Write", Input: map[string]any{"file_path": filepath.Join(protected, "x", "new.txt"), "content": "edited\n"}})
	a := NewAgentOn(t, agenttest.SandboxedSamples(t, protected, "    agentsUnderLoadoutSandbox: true\n"), HTTPHook, Turn{Text: "cleaning", Tools: tools})
	withoutBubblewrap(t, a.Session)
	a.Session.Wrap = []string{agenttest.Loadout(t), "sandbox", "--from", a.Hostd.ContextDir, "--"}
	a.Run(t, "clean up the tree")
	results := a.Model.ToolResults()
	agenttest.TreeIntact(t, protected, x, results)
	// Claude Code's Write tool saves by writing a temporary file and
	// renaming it over the target: Landlock counts the rename as a remove
	// of the temporary name, so in a tree without remove it is refused
	// (docs/security.md, "What it does not guarantee"). Nothing lands, and
	// the model reads the EACCES.
	if r := results["toolu_edit"]; !r.IsError || !strings.Contains(r.Text, "EACCES") || !strings.Contains(r.Text, "rename") {
		t.Errorf("the Write tool in the no-remove tree: %+v, want EACCES on its rename", r)
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); err == nil {
		t.Errorf("Claude Code's Write tool wrote outside the declared paths: %+v", results["toolu_out"])
	}
	ran := 0
	for id, r := range results {
		if strings.HasPrefix(id, "toolu_del") && (strings.Contains(r.Text, "Permission denied") || strings.Contains(r.Text, "Operation not permitted")) {
			ran++
		}
	}
	if ran == 0 {
		t.Errorf("no deletion line met the sandbox: %+v", results)
	}
	t.Logf("%d of %d deletion lines ran and met Landlock; the others were refused before running", ran, len(lines))
}

// helloOn serves "hello from HOST" on a loopback address of its own (all
// of 127/8 is local on Linux) and returns ip:port.
func helloOn(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.Host) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// With a declared network (hosts by name), Claude Code's own sandbox keeps
// its Bash from any host the declaration does not name: the managed
// settings allow only hostd's and the declared hosts' names
// (allowManagedDomainsOnly), so a fetch of an undeclared host from Bash
// fails, naming the managed allowlist, while the declared one answers.
func TestClaudeCode_OwnSandboxRefusesAnUndeclaredHost_Issue42(t *testing.T) {
	for _, p := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s (hack/apt-install.sh installs it; make test runs it)", p)
		}
	}
	declared, undeclared := helloOn(t, "127.0.0.2"), helloOn(t, "127.0.0.3")
	protected, _ := agenttest.ProtectedTree(t)
	script := fmt.Sprintf(`python3 -c '
import urllib.request as u
print("ran")
for name, url in (("declared", "http://%s/"), ("undeclared", "http://%s/")):
    try:
        print(name, u.urlopen(url, timeout=10).read().decode())
    except Exception as e:
        print(name, "failed:", e)
'`, declared, undeclared)
	tools := []ToolUse{{ID: "toolu_net", Name: "Bash", Input: map[string]any{"command": script, "description": "fetch"}}}
	network := fmt.Sprintf("    network: {connectPorts: [], hosts: [%q]}\n", declared)
	a := NewAgentOn(t, agenttest.SandboxedSamples(t, protected, network), HTTPHook, Turn{Text: "fetching", Tools: tools})
	a.Run(t, "fetch both")
	r := a.Model.ToolResults()["toolu_net"]
	if !strings.Contains(r.Text, "ran") {
		t.Fatalf("the fetch never ran in Claude Code's Bash: %+v", r)
	}
	if strings.Contains(r.Text, "hello from "+undeclared) || !strings.Contains(r.Text, "undeclared failed") {
		t.Errorf("Claude Code's Bash reached a host the sandbox does not declare: %+v", r)
	}
	if !strings.Contains(r.Text, "declared hello from "+declared) {
		t.Errorf("Claude Code's Bash did not reach the declared host through its sandbox's proxy: %+v", r)
	}
	t.Logf("Claude Code's Bash: %s", r.Text)
}
