package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

func TestMain(m *testing.M) { agenttest.Main(m) }

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
// tells a platform to: hostd with --materialize --claude-code, the
// review-notes Service behind the runnable tool, and /etc/claude-code
// linking the tree's managed settings, managed MCP server, CLAUDE.md, skills
// and commands, as an agent image bakes them in.
type Agent struct {
	Hostd   *agenttest.Hostd
	Notes   *agenttest.ReviewNotes
	Model   *Model
	Session *Session
}

// NewAgent sets Claude Code up against a model playing script. Claude Code
// reads managed settings only from /etc/claude-code, which a test must not
// write: the session sees its own /etc/claude-code in a private mount
// namespace (agenttest.WithPrivateEtc). Where that is not allowed, the same
// files come in at a tier a user could override: the tree's CLAUDE.md,
// skills and commands linked from ~/.claude, the settings with --settings
// and the MCP server with --mcp-config --strict-mcp-config. Claude Code's
// own permission rules allow the tools either way, so what blocks a call is
// Loadout's hook and nothing else.
func NewAgent(t *testing.T, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	return NewAgentOn(t, agenttest.PreviewSamples(t), wiring, script...)
}

// NewAgentOn is NewAgent on the context data (a ConfigMap's data).
func NewAgentOn(t *testing.T, data map[string]string, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	return newAgent(t, data, nil, wiring, script...)
}

// NewAgentWithHostdArgs is NewAgent with more flags for hostd.
func NewAgentWithHostdArgs(t *testing.T, hostdArgs []string, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	return newAgent(t, agenttest.PreviewSamples(t), hostdArgs, wiring, script...)
}

func newAgent(t *testing.T, data map[string]string, hostdArgs []string, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	a := &Agent{Notes: agenttest.StartReviewNotes(t, data)}
	a.Hostd = agenttest.StartHostd(t, data, append(append(a.Notes.HostdArgs, "--claude-code"), hostdArgs...)...)
	a.Model = NewModel(t, script...)
	a.Session = NewSession(t, a.Model)
	settings := filepath.Join(a.Hostd.TreeDir, "managed-settings.json")
	if wiring == CommandHook {
		settings = commandHookSettings(t, a.Hostd.URL)
	}
	a.Session.Args = []string{"--allowedTools", "Bash", "Write", "mcp__loadout__review_note"}
	if ManagedInstall() {
		// The tree stays hostd's; /etc/claude-code only links to it.
		etc := t.TempDir()
		resourcestest.Symlink(t, settings, filepath.Join(etc, "managed-settings.json"))
		for from, to := range map[string]string{
			"managed-mcp.json": "managed-mcp.json",
			"CLAUDE.md":        "CLAUDE.md",
			"skills":           ".claude/skills",
			"commands":         ".claude/commands",
		} {
			resourcestest.Symlink(t, filepath.Join(a.Hostd.TreeDir, from), filepath.Join(etc, to))
		}
		a.Session.Etc = etc
		return a
	}
	t.Log("no private /etc/claude-code (unshare --mount refused, or LOADOUT_AGENT_INSTALL=workstation): managed settings with --settings, the tree linked from ~/.claude")
	claudeDir := filepath.Join(a.Session.Home, ".claude")
	for _, name := range []string{"CLAUDE.md", "skills", "commands"} {
		resourcestest.Symlink(t, filepath.Join(a.Hostd.TreeDir, name), filepath.Join(claudeDir, name))
	}
	a.Session.Args = append(a.Session.Args,
		"--settings", settings,
		"--mcp-config", filepath.Join(a.Hostd.TreeDir, "managed-mcp.json"), "--strict-mcp-config")
	return a
}

// ManagedInstall reports whether the sessions get their own /etc/claude-code.
func ManagedInstall() bool { return agenttest.PrivateEtcAllowed() }

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
	return writeManagedHooks(t, map[string]any{
		"PreToolUse": hook(true), "PostToolUse": hook(false), "PostToolUseFailure": hook(false)})
}

// writeManagedHooks writes settings that allow only these hooks, the way
// managed settings do, to a fresh settings.json and returns its path.
func writeManagedHooks(t *testing.T, hooks map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"allowManagedHooksOnly": true, "hooks": hooks})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.TempFile(t, "settings.json", b, 0o644)
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

// EditManagedSettings gives the session a copy of hostd's managed settings
// changed by edit, in place of the tree's: what a platform could add to the
// file, tried with the real CLI. Only with ManagedInstall.
func (a *Agent) EditManagedSettings(t *testing.T, edit func(settings map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(a.Hostd.TreeDir, "managed-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	edit(settings)
	b, err = json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(a.Session.Etc, "managed-settings.json")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	resourcestest.Symlink(t, testenv.TempFile(t, "managed-settings.json", b, 0o644), link)
}
