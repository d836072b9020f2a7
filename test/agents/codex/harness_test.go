package codex

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

func TestMain(m *testing.M) { agenttest.Main(m) }

// runTimeout bounds one `codex exec`: a hang fails the test instead of
// holding the suite.
const runTimeout = 2 * time.Minute

// session is one Codex install on the samples' Workspace, wired as
// docs/agents.md#codex tells: hostd materializes the Codex layout into
// CODEX_HOME, the managed requirements.toml and MCP server come from
// /etc/codex, and `loadout` is on the PATH hooks run with. Where the test
// cannot give Codex its own /etc/codex, it wires the workstation install
// instead: the tree's hooks.json in CODEX_HOME, run without trust review,
// and the MCP server in the user's config.toml.
type session struct {
	hostd *agenttest.Hostd
	notes *agenttest.ReviewNotes
	// home is CODEX_HOME; work the directory Codex works in.
	home, work string
	// etc is what /etc/codex holds for this session (see run).
	etc string
	// mcp is Codex's configuration of hostd's MCP server.
	mcp string
	// user is added to the user's config.toml, and args to codex exec.
	user string
	args []string
	// sandbox is codex exec's --sandbox; empty: danger-full-access (the
	// tests' default: Loadout's hooks, not Codex's sandbox, decide).
	sandbox string
	// env is added to codex exec's environment, after (so over) the
	// session's own.
	env []string
}

func newSession(t *testing.T) *session {
	t.Helper()
	return newSessionOn(t, agenttest.PreviewSamples(t))
}

// newSessionOn is newSession on the context data (a ConfigMap's data).
func newSessionOn(t *testing.T, data map[string]string) *session {
	t.Helper()
	notes := agenttest.StartReviewNotes(t, data)
	s := startSession(t, data, notes.HostdArgs...)
	s.notes = notes
	s.linkRequirements(t)
	s.mcp = fmt.Sprintf("\n[mcp_servers.loadout]\nurl = %q\n", s.hostd.URL+"/mcp")
	resourcestest.WriteTree(t, s.etc, map[string]string{"config.toml": s.mcp})
	return s
}

// startSession starts hostd on data (with hostdArgs) materializing the
// Codex layout into a fresh CODEX_HOME, with fresh work and /etc/codex
// directories.
func startSession(t *testing.T, data map[string]string, hostdArgs ...string) *session {
	t.Helper()
	s := &session{home: codexHome(t), work: t.TempDir(), etc: t.TempDir()}
	s.hostd = agenttest.StartHostd(t, data, append(hostdArgs, "--materialize", s.home, "--codex")...)
	return s
}

// codexHome is a fresh CODEX_HOME outside /tmp: Codex refuses to create
// its helper aliases (codex-linux-sandbox, which its bubblewrap sandbox
// execs) under a temporary directory, and without them every command of a
// sandboxed session fails before it runs ("bwrap: execvp
// codex-linux-sandbox"), which would make a sandbox test pass without
// running anything.
func codexHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "loadout-codex-home-") //nolint:usetesting // not under /tmp, see above
	if err != nil {
		t.Skipf("no /var/tmp for CODEX_HOME outside /tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// linkRequirements links /etc/codex/requirements.toml to the tree's, as an
// image would.
func (s *session) linkRequirements(t *testing.T) {
	t.Helper()
	resourcestest.Symlink(t, filepath.Join(s.home, "requirements.toml"), filepath.Join(s.etc, "requirements.toml"))
}

// run runs `codex exec prompt` offline against the scripted model server
// and returns its output. The user's config.toml only selects the model
// provider. /etc/codex is s.etc inside a private mount namespace
// (agenttest.WithPrivateEtc), so the test installs managed files without
// touching the machine's /etc.
func (s *session) run(t *testing.T, model *responses.Server, prompt string) string {
	t.Helper()
	out, err := s.runErr(t, model, prompt)
	if err != nil {
		t.Fatalf("codex exec: %v\n%s\nhostd:\n%s", err, out, s.hostd.Log())
	}
	return out
}

// runErr is run that returns codex exec's failure instead of failing the
// test; a run that outlives runTimeout still fails it.
func (s *session) runErr(t *testing.T, model *responses.Server, prompt string) (string, error) {
	t.Helper()
	config := model.CodexConfig() + s.user
	mode := s.sandbox
	if mode == "" {
		mode = "danger-full-access"
	}
	exec1 := append([]string{agenttest.CLI(t, "codex"), "exec", "--skip-git-repo-check", "--sandbox", mode, "-C", s.work}, s.args...)
	var argv []string
	if managedInstall() {
		argv = agenttest.WithPrivateEtc(t, "codex", s.etc, exec1)
	} else {
		t.Log("no private /etc/codex (unshare --mount refused, or LOADOUT_AGENT_INSTALL=workstation): the workstation install, hooks.json without trust review")
		config += s.mcp
		argv = append(exec1, "--dangerously-bypass-hook-trust")
	}
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], prompt)...)
	cmd.Env = append(os.Environ(),
		"CODEX_HOME="+s.home,
		"HOME="+t.TempDir(),
		"PATH="+filepath.Dir(agenttest.Loadout(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LOADOUT_HOSTD_URL="+s.hostd.URL,
	)
	cmd.Env = append(cmd.Env, s.env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("codex exec did not finish within %s:\n%s", runTimeout, out)
	}
	return string(out), err
}

// managedInstall reports whether this machine can give Codex its own
// /etc/codex; $LOADOUT_AGENT_INSTALL=workstation forces the workstation
// install.
func managedInstall() bool { return agenttest.PrivateEtcAllowed() }

// toolNamed finds the offered tool whose name ends in suffix (Codex names
// MCP tools after their server).
func toolNamed(r responses.Request, suffix string) string {
	for _, name := range r.ToolNames() {
		if strings.HasSuffix(name, suffix) {
			return name
		}
	}
	return ""
}
