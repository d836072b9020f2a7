package claudecode

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// The Workspace's winning skills, instructions, active skill and prompt guide
// reach the model through the materialized skills and the SessionStart
// context (the tenant's text; CLAUDE.md holds only the platform's); the
// platform's shadowed skill does not. hostd's MCP tool is loaded up front
// (alwaysLoad), not behind a tool search.
func TestClaudeCode_WorkspaceContextReachesTheModel(t *testing.T) { // R-AG-1, R-AG-5
	a := NewAgent(t, HTTPHook)
	a.Run(t, "hello")
	first := a.Model.FirstAgentRequest(t)
	first.MustReach(t, map[string]string{
		"the instructions":             "You work on team-a's parser and runtime.",
		"the active skill's body":      "PROJECT-REVIEW-BODY",
		"the active skill's file":      "No buffer outlives its owner.",
		"the extension's prompt guide": "Record each review finding with review_note",
		"the winning skill's listing":  "team-a's review method for parser and runtime changes.",
	})
	if strings.Contains(first.Raw, "PLATFORM-REVIEW-BODY") || strings.Contains(first.Raw, "Generic code review guidance") {
		t.Error("the shadowed platform skill reached the model")
	}
	if !slices.Contains(first.Tools, "mcp__loadout__review_note") {
		t.Errorf("mcp__loadout__review_note is not among the tools offered up front: %v", first.Tools)
	}
}

// A platform-denied shell command never runs and the model gets the guard's
// reason; an allowed command runs. Both wirings.
func TestClaudeCode_PlatformGuardDeniesTheShellCommandAndAllowsOthers(t *testing.T) { // R-AG-4
	for _, wiring := range []Wiring{HTTPHook, CommandHook} {
		t.Run(string(wiring), func(t *testing.T) {
			a := NewAgent(t, wiring,
				Turn{Text: "cleaning", Tools: []ToolUse{{ID: "toolu_rm", Name: "Bash", Input: map[string]any{"command": "rm -rf build", "description": "remove build"}}}},
				Turn{Text: "listing", Tools: []ToolUse{{ID: "toolu_ls", Name: "Bash", Input: map[string]any{"command": "ls", "description": "list"}}}},
			)
			marker := agenttest.BuildMarker(t, a.Session.WorkDir)
			a.Run(t, "clean up, then list")
			agenttest.FileLeft(t, marker, "rm -rf build ran", "")
			results := a.Model.ToolResults()
			if rm := results["toolu_rm"]; !strings.Contains(rm.Text, "platform policy: recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)") {
				t.Errorf("the model got %+v for rm -rf build, want the guard's reason", rm)
			}
			if ls := results["toolu_ls"]; ls.IsError || !strings.Contains(ls.Text, "build") {
				t.Errorf("the model got %+v for ls, want the listing", ls)
			}
		})
	}
}

// The runnable tool works through hostd's MCP server; a note with SECRET is
// denied by the Workspace's hook and never reaches the Service.
func TestClaudeCode_RunnableToolThroughMCPAndSecretNeverReachesTheService(t *testing.T) { // R-AG-4
	a := NewAgent(t, HTTPHook,
		Turn{Tools: []ToolUse{{ID: "toolu_ok", Name: "mcp__loadout__review_note", Input: map[string]any{"text": "parser.go:42 drops an error"}}}},
		Turn{Tools: []ToolUse{{ID: "toolu_secret", Name: "mcp__loadout__review_note", Input: map[string]any{"text": "the SECRET is 42"}}}},
	)
	a.Run(t, "review")
	results := a.Model.ToolResults()
	if ok := results["toolu_ok"]; ok.IsError {
		t.Errorf("the allowed note failed: %+v", ok)
	}
	if secret := results["toolu_secret"]; !strings.Contains(secret.Text, "review notes must not contain secrets") {
		t.Errorf("the model got %+v for the SECRET note, want the hook's reason", secret)
	}
	if notes := a.Notes.Notes(t); !slices.Equal(notes, []string{"parser.go:42 drops an error"}) {
		t.Errorf("the Service got %q, want only the allowed note", notes)
	}
}

// With hostd down nothing runs: the managed UserPromptSubmit hook refuses the
// prompt before the model is asked, or, where only the tool events are hooked,
// every tool call is blocked. Both wirings.
func TestClaudeCode_HostdDownBlocksEveryCall(t *testing.T) { // R-AG-3
	for _, wiring := range []Wiring{HTTPHook, CommandHook} {
		t.Run(string(wiring), func(t *testing.T) {
			a := NewAgent(t, wiring)
			a.Model.Play(
				Turn{Tools: []ToolUse{{ID: "toolu_touch", Name: "Bash", Input: map[string]any{"command": "touch made", "description": "touch"}}}},
				Turn{Tools: []ToolUse{{ID: "toolu_write", Name: "Write", Input: map[string]any{"file_path": filepath.Join(a.Session.WorkDir, "written.txt"), "content": "x"}}}},
				Turn{Tools: []ToolUse{{ID: "toolu_note", Name: "mcp__loadout__review_note", Input: map[string]any{"text": "a note"}}}},
			)
			a.Hostd.Stop()
			a.Run(t, "do things")
			for _, f := range []string{"made", "written.txt"} {
				agenttest.NoFileLeft(t, filepath.Join(a.Session.WorkDir, f), f+" was created with hostd down", "")
			}
			if len(a.Model.AgentRequests()) > 0 {
				results := a.Model.ToolResults()
				for _, id := range []string{"toolu_touch", "toolu_write", "toolu_note"} {
					if r, ok := results[id]; !ok || !r.IsError {
						t.Errorf("%s with hostd down: %+v, want an error result", id, r)
					}
				}
			}
			if notes := a.Notes.Notes(t); len(notes) != 0 {
				t.Errorf("the Service got %q with hostd down", notes)
			}
		})
	}
}

// The Workspace's template reaches Claude Code twice: as the command
// /review-template (the skill review takes /review), whose $1 $2 Claude Code
// fills in argument-hint order, and as hostd's MCP prompt
// /mcp__loadout__review, which hostd renders. The model gets the same text.
func TestClaudeCode_TemplateIsASlashCommandAndAnMCPPrompt(t *testing.T) { // R-TPL-1, R-TPL-3
	for _, command := range []string{"/review-template", "/mcp__loadout__review"} {
		t.Run(strings.TrimPrefix(command, "/"), func(t *testing.T) {
			a := NewAgent(t, HTTPHook)
			a.Run(t, command+" parser.go runtime")
			first := a.Model.FirstAgentRequest(t)
			if want := "Review parser.go for runtime. Focus on parser.go."; !strings.Contains(first.Raw, want) {
				t.Errorf("the model did not get %q from %s parser.go runtime: %v", want, command, first.Messages)
			}
			if strings.Contains(first.Raw, "ARGUMENTS: parser.go runtime") {
				t.Errorf("%s ran the skill review", command)
			}
		})
	}
}
