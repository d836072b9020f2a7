package claudecode

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// runTimeout bounds one claude -p run: a hung CLI fails its test instead of
// hanging the suite.
const runTimeout = 3 * time.Minute

// Session is one claude -p run's surroundings: its home, working directory
// and environment, offline against a scripted model.
type Session struct {
	Home    string
	WorkDir string
	Env     []string
	Args    []string
	// Etc, when set, is what Claude Code sees as /etc/claude-code, where it
	// reads managed settings (agenttest.WithPrivateEtc).
	Etc string
	// Wrap, when set, is the command Claude Code runs under (`loadout
	// sandbox --from DIR --`).
	Wrap []string
}

// NewSession prepares an offline claude -p session against model: a fresh
// HOME and working directory, a dummy key, and every non-essential network
// call (telemetry, updates, error reports) off.
func NewSession(t testing.TB, model *Model) *Session {
	t.Helper()
	dir := t.TempDir()
	s := &Session{Home: filepath.Join(dir, "home"), WorkDir: filepath.Join(dir, "work")}
	for _, d := range []string{s.Home, s.WorkDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.Env = []string{
		"HOME=" + s.Home,
		// `loadout hook claude-code` (the managed SessionStart hook, which
		// brings the tenants' project content) runs from the PATH.
		"PATH=" + filepath.Dir(agenttest.Loadout(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + model.URL,
		"ANTHROPIC_API_KEY=sk-ant-scripted",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"NO_PROXY=127.0.0.1,localhost",
	}
	return s
}

// Run runs claude -p prompt with the session's arguments, bounded by
// runTimeout, and returns its stdout and stderr.
func (s *Session) Run(t testing.TB, prompt string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	all := append([]string{"-p", prompt, "--output-format", "json"}, s.Args...)
	all = append(all, args...)
	argv := append(append(slices.Clone(s.Wrap), agenttest.CLI(t, "claude")), all...)
	if s.Etc != "" {
		argv = agenttest.WithPrivateEtc(t, "claude-code", s.Etc, argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.WorkDir
	cmd.Env = s.Env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude -p did not end within %s\nstdout: %s\nstderr: %s", runTimeout, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String(), err
}
