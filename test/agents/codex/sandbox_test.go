package codex

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// With a declared sandbox, requirements.toml pins Codex's sandbox modes:
// asked for danger-full-access, Codex refuses to start; in workspace-write,
// every line of the sandbox corpus (shellcorpus.Issue42) that deleted a tree past the shell guard, and every
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
	// The lines ran in the sandbox and met it, rather than failing to start
	// (a sandbox helper Codex could not find refuses every command).
	met := 0
	for i := range turns[:len(turns)-2] {
		for _, r := range model.Requests() {
			got, ok := r.Output(fmt.Sprintf("d%d", i))
			if !ok {
				continue
			}
			if strings.Contains(got, "execvp codex-linux-sandbox") {
				t.Fatalf("Codex's sandbox did not start: %s", got)
			}
			if strings.Contains(got, "Read-only file system") || strings.Contains(got, "Permission denied") || strings.Contains(got, "Operation not permitted") {
				met++
			}
			break
		}
	}
	if met == 0 {
		t.Errorf("no deleting line met Codex's sandbox\n%s", out)
	}
	t.Logf("%d of %d deleting lines ran and met Codex's sandbox; the others were refused before running or deleted nothing", met, len(turns)-2)
}

// With a declared network, Codex's own sandbox (workspace-write, network
// off) keeps its shell from a host the declaration does not name: the
// fetch fails and the model reads why. Codex's network switch knows no
// names, so the declared host is refused too (its mapping grants less,
// docs/agents.md "Sandbox"); `loadout sandbox` around Codex reaches it
// through the egress proxy.
func TestCodex_OwnSandboxRefusesAnUndeclaredHost_Issue42(t *testing.T) {
	if !managedInstall() {
		t.Skip("no private /etc/codex here (unshare --mount refused): requirements.toml cannot be installed")
	}
	l, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.3: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello from undeclared")) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	protected, _ := agenttest.ProtectedTree(t)
	s := newSessionOn(t, agenttest.SandboxedSamples(t, protected, "    network: {connectPorts: [], hosts: [\"github.com\"]}\n"))
	s.sandbox = "workspace-write"
	fetch := fmt.Sprintf(`python3 -c 'import urllib.request as u; print("ran"); print(u.urlopen("http://%s/", timeout=10).read().decode())'`, l.Addr())
	model := responses.Start(t, responses.Shell("n", fetch), responses.Say("done"))
	out := s.run(t, model, "fetch it")
	model.MustHaveGot(t, "n", "ran", out)
	for _, r := range model.Requests() {
		if got, ok := r.Output("n"); ok && strings.Contains(got, "hello from undeclared") {
			t.Errorf("Codex's shell reached a host the sandbox does not declare: %s", got)
		}
	}
}
