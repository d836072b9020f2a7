package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// The managed install is the platform's: a user (or a repository) whose
// settings disable all hooks, or bring a PreToolUse hook of their own that
// answers "allow", still gets rm -rf denied by the managed hook through
// hostd, and their own hook never runs (allowManagedHooksOnly).
func TestClaudeCode_UserCannotOverrideTheManagedHooks(t *testing.T) { // R-AG-4
	if !ManagedInstall() {
		t.Skip("no private /etc/claude-code here (unshare --mount refused): the managed install cannot be tested, --settings is a tier a user overrides")
	}
	for name, user := range map[string]func(ran string) map[string]any{
		"disableAllHooks": func(string) map[string]any { return map[string]any{"disableAllHooks": true} },
		"own allow hook": func(ran string) map[string]any {
			allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
			hook := map[string]any{"type": "command", "command": "touch " + ran + " && echo '" + allow + "'"}
			return map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{hook}}}}}
		},
	} {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			a := NewAgent(t, HTTPHook,
				Turn{Tools: []ToolUse{{ID: "toolu_rm", Name: "Bash", Input: map[string]any{"command": "rm -rf build", "description": "remove build"}}}},
			)
			ran := filepath.Join(t.TempDir(), "user-hook-ran")
			settings, err := json.Marshal(user(ran))
			if err != nil {
				t.Fatal(err)
			}
			// The user's settings and the repository's, both.
			for _, dir := range []string{filepath.Join(a.Session.Home, ".claude"), filepath.Join(a.Session.WorkDir, ".claude")} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			marker := agenttest.BuildMarker(t, a.Session.WorkDir)
			a.Run(t, "clean up")
			agenttest.FileLeft(t, marker, "rm -rf build ran", "")
			if rm := a.Model.ToolResults()["toolu_rm"]; !strings.Contains(rm.Text, "platform policy: recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)") {
				t.Errorf("the model got %+v for rm -rf build, want the guard's reason", rm)
			}
			agenttest.NoFileLeft(t, ran, "the user's own hook ran next to the managed one", "")
		})
	}
}
