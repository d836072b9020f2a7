package agentcommands

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

var (
	toolSteps   = []contract.TemplateStep{{Tool: "review_note", Arguments: []byte(`{"text":"{{note}}"}`)}, {Render: true}}
	renderSteps = []contract.TemplateStep{{Render: true}, {Template: "hello"}}
)

// A command with tool steps is withheld from Claude Code, whose command
// files cannot run them through the hooks; one of render steps is not.
// Codex gets none (R-TPL-6).
func TestOf_ToolStepsAreNotOfferedToClaudeCode_RTPL6(t *testing.T) {
	for _, c := range []struct {
		steps         []contract.TemplateStep
		claude, codex bool
	}{
		{nil, true, false},
		{renderSteps, true, false},
		{toolSteps, false, false},
	} {
		if got := OfferedTo(ClaudeCode, c.steps); got != c.claude {
			t.Errorf("steps %+v offered to Claude Code: %v, want %v", c.steps, got, c.claude)
		}
		if got := OfferedTo(Codex, c.steps); got != c.codex {
			t.Errorf("steps %+v offered to Codex: %v, want %v", c.steps, got, c.codex)
		}
	}
}

// The summary names each withheld command, the agent and why, bounded:
// past maxNames the rest are counted.
func TestSummary_NamesCommandsAgentsAndReasonsBounded_RTPL6(t *testing.T) {
	all, msg := Summary([]Command{{Name: "hello"}, {Name: "brief", Steps: renderSteps}}, 4)
	if !all || !strings.Contains(msg, "no command is offered to codex") || strings.Contains(msg, "claude-code") {
		t.Errorf("render-only commands: %v %q", all, msg)
	}
	cmds := []Command{{Name: "hello"}}
	for i := range 10 {
		cmds = append(cmds, Command{Name: fmt.Sprintf("ship%d", i), Steps: toolSteps})
	}
	all, msg = Summary(cmds, 3)
	want := "ship0, ship1, ship2 and 7 more are not offered to claude-code: " + ReasonToolSteps
	if all || !strings.Contains(msg, want) || strings.Contains(msg, "ship3") {
		t.Errorf("tool-step commands: %v %q, want it to contain %q", all, msg, want)
	}
	if all, msg := Summary(nil, 3); !all || msg != "no commands" {
		t.Errorf("no commands: %v %q", all, msg)
	}
}
