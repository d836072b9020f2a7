package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	agenttest.Cleanup()
	os.Exit(code)
}

// Wiring is how Claude Code reaches hostd's policy: docs/agents.md documents
// both.
type Wiring string

const (
	// HTTPHook is the materialized managed-settings.json: Claude Code POSTs
	// each hook to hostd.
	HTTPHook Wiring = "http"
	// CommandHook runs `loadout hook claude-code` per call.
	CommandHook Wiring = "command"
)

// Agent is Claude Code installed on the samples' Workspace as docs/agents.md
// tells a platform to: hostd with --materialize --claude-code, the review-notes
// Service behind the runnable tool, and a session whose ~/.claude links the
// tree's CLAUDE.md, skills and commands, with the tree's managed settings and
// MCP server.
type Agent struct {
	Hostd   *agenttest.Hostd
	Notes   *agenttest.ReviewNotes
	Model   *Model
	Session *Session
}

// NewAgent sets Claude Code up against a model playing script.
func NewAgent(t *testing.T, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	data := agenttest.PreviewSamples(t)
	a := &Agent{Notes: agenttest.StartReviewNotes(t, data)}
	a.Hostd = agenttest.StartHostd(t, data, append(a.Notes.HostdArgs, "--claude-code")...)
	a.Model = NewModel(t, script...)
	a.Session = NewSession(t, a.Model)
	claudeDir := filepath.Join(a.Session.Home, ".claude")
	if err := os.MkdirAll(claudeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The tree stays hostd's; the agent's home only links to it.
	for _, name := range []string{"CLAUDE.md", "skills", "commands"} {
		if err := os.Symlink(filepath.Join(a.Hostd.TreeDir, name), filepath.Join(claudeDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	settings := filepath.Join(a.Hostd.TreeDir, "managed-settings.json")
	if wiring == CommandHook {
		settings = commandHookSettings(t, a.Hostd.URL)
	}
	// Claude Code reads managed settings only from /etc/claude-code, which a
	// test must not write; --settings loads the same file. The MCP server
	// comes from the tree's managed-mcp.json, the only one Claude Code may
	// use here. Claude Code's own permission rules allow the tools, so what
	// blocks a call is Loadout's hook and nothing else.
	a.Session.Args = []string{
		"--settings", settings,
		"--mcp-config", filepath.Join(a.Hostd.TreeDir, "managed-mcp.json"), "--strict-mcp-config",
		"--allowedTools", "Bash", "Write", "mcp__loadout__review_note",
	}
	return a
}

// commandHookSettings is docs/agents.md's command hook wiring.
func commandHookSettings(t *testing.T, hostdURL string) string {
	t.Helper()
	command := agenttest.Loadout(t) + " hook claude-code --hostd-url " + hostdURL
	hook := func(block bool) []any {
		h := map[string]any{"type": "command", "command": command, "timeout": 60}
		if block {
			h["onFailure"] = "block"
		}
		return []any{map[string]any{"matcher": "*", "hooks": []any{h}}}
	}
	b, err := json.Marshal(map[string]any{"allowManagedHooksOnly": true, "hooks": map[string]any{
		"PreToolUse": hook(true), "PostToolUse": hook(false), "PostToolUseFailure": hook(false)}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Run runs claude -p and fails the test when it fails.
func (a *Agent) Run(t *testing.T, prompt string) string {
	t.Helper()
	out, stderr, err := a.Session.Run(t, prompt)
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	return out
}
