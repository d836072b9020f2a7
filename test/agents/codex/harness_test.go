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

	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

func TestMain(m *testing.M) {
	code := m.Run()
	agenttest.Cleanup()
	os.Exit(code)
}

// runTimeout bounds one `codex exec`: a hang fails the test instead of
// holding the suite.
const runTimeout = 2 * time.Minute

// session is one Codex install on the samples' Workspace, wired as
// docs/agents.md#codex tells: hostd materializes the Codex layout into
// CODEX_HOME, the managed requirements.toml and MCP server come from
// /etc/codex, and `loadout` is on the PATH hooks run with.
type session struct {
	hostd *agenttest.Hostd
	notes *agenttest.ReviewNotes
	// home is CODEX_HOME; work the directory Codex works in.
	home, work string
	// etc is what /etc/codex holds for this session (see run).
	etc string
}

func newSession(t *testing.T) *session {
	t.Helper()
	data := agenttest.PreviewSamples(t)
	s := &session{notes: agenttest.StartReviewNotes(t, data), home: t.TempDir(), work: t.TempDir(), etc: t.TempDir()}
	s.hostd = agenttest.StartHostd(t, data, append(s.notes.HostdArgs, "--materialize", s.home, "--codex")...)
	// /etc/codex/requirements.toml is the tree's, linked as an image would.
	if err := os.Symlink(filepath.Join(s.home, "requirements.toml"), filepath.Join(s.etc, "requirements.toml")); err != nil {
		t.Fatal(err)
	}
	managed := fmt.Sprintf("[mcp_servers.loadout]\nurl = %q\n", s.hostd.URL+"/mcp")
	if err := os.WriteFile(filepath.Join(s.etc, "config.toml"), []byte(managed), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs `codex exec prompt` offline against the scripted model server
// and returns its output. The user's config.toml only selects the model
// provider. /etc/codex is s.etc inside a private mount namespace (an overlay
// on /etc that only this process sees), so the test installs managed files
// without touching the machine's /etc.
func (s *session) run(t *testing.T, model *responses.Server, prompt string) string {
	t.Helper()
	config := fmt.Sprintf(`model = "scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, model.URL)
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	upper := t.TempDir()
	if err := os.Mkdir(filepath.Join(upper, "upper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(s.etc, filepath.Join(upper, "upper", "codex")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(upper, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	mount := fmt.Sprintf(`mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/upper,workdir=%s/work /etc && exec "$0" "$@"`, upper, upper)
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--", "sh", "-c", mount,
		agenttest.CLI(t, "codex"), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-C", s.work, prompt)
	cmd.Env = append(os.Environ(),
		"CODEX_HOME="+s.home,
		"HOME="+t.TempDir(),
		"PATH="+filepath.Dir(agenttest.Loadout(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LOADOUT_HOSTD_URL="+s.hostd.URL,
	)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("codex exec did not finish within %s:\n%s", runTimeout, out)
	}
	if err != nil {
		t.Fatalf("codex exec: %v\n%s\nhostd:\n%s", err, out, s.hostd.Log())
	}
	return string(out)
}

// requireManagedInstall skips when this machine cannot give a process its
// own /etc/codex (no mount namespaces: not root, or a restricted container).
func requireManagedInstall(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("unshare", "--mount", "--", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot install /etc/codex for the test (unshare --mount: %v: %s)", err, strings.TrimSpace(string(out)))
	}
}

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
