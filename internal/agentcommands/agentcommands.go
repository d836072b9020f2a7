// Package agentcommands decides which agents a Template's command is
// offered to. A command must never reach an agent as less than the Template
// says: an agent that cannot run a command's tool steps through the hooks is
// not given the command at all, and the Workspace says so (rule R-TPL-6).
package agentcommands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// The agents that get commands from a materialized tree. Pi is not among
// them: the Loadout package runs every step itself, through the hooks.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// Reasons a command is not offered.
const (
	// ReasonToolSteps: Claude Code's commands are prompt text; nothing in a
	// command file runs a tool call through the hooks, so a command with
	// tool steps would run its template part only.
	ReasonToolSteps = "its tool steps cannot run through Claude Code's hooks: a Claude Code command is prompt text only, and a command without its steps would do less than the Template says (Pi runs them)"
	// ReasonCodexNoCommands: Codex 0.169 reads no user-defined commands
	// (its custom prompts, ~/.codex/prompts, are gone; the binary expands
	// no $ARGUMENTS), so no template can become one.
	ReasonCodexNoCommands = "Codex 0.169 has no user-defined commands (custom prompts were removed)"
)

// Unoffered is one agent a command is not offered to, and why.
type Unoffered struct {
	Agent  string
	Reason string
}

// HasToolSteps reports whether a command calls tools.
func HasToolSteps(steps []contract.TemplateStep) bool {
	return slices.ContainsFunc(steps, func(s contract.TemplateStep) bool { return s.Tool != "" })
}

// Of lists the agents a template's command is not offered to.
func Of(steps []contract.TemplateStep) []Unoffered {
	var out []Unoffered
	if HasToolSteps(steps) {
		out = append(out, Unoffered{ClaudeCode, ReasonToolSteps})
	}
	return append(out, Unoffered{Codex, ReasonCodexNoCommands})
}

// OfferedTo reports whether agent gets the command of a template with steps.
func OfferedTo(agent string, steps []contract.TemplateStep) bool {
	return !slices.ContainsFunc(Of(steps), func(u Unoffered) bool { return u.Agent == agent })
}

// Command is a template's command name and steps, for Summary.
type Command struct {
	Name  string
	Steps []contract.TemplateStep
}

// Summary says which commands are not offered to which agent, per reason,
// naming at most maxNames commands a reason (the rest are counted), so the
// text stays bounded whatever the catalog holds. all is true when every
// command is offered to every agent that reads commands except for Codex's
// blanket absence, which Summary states once.
func Summary(cmds []Command, maxNames int) (all bool, msg string) {
	if len(cmds) == 0 {
		return true, "no commands"
	}
	type group struct {
		agent, reason string
		names         []string
	}
	var groups []*group
	for _, c := range cmds {
		for _, u := range Of(c.Steps) {
			i := slices.IndexFunc(groups, func(g *group) bool { return g.agent == u.Agent && g.reason == u.Reason })
			if i < 0 {
				groups = append(groups, &group{agent: u.Agent, reason: u.Reason})
				i = len(groups) - 1
			}
			groups[i].names = append(groups[i].names, c.Name)
		}
	}
	all = true
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		if g.reason != ReasonCodexNoCommands {
			all = false
		}
		names := g.names
		more := ""
		if len(names) > maxNames {
			more = fmt.Sprintf(" and %d more", len(names)-maxNames)
			names = names[:maxNames]
		}
		verb := "is"
		if len(g.names) > 1 {
			verb = "are"
		}
		if g.reason == ReasonCodexNoCommands && len(g.names) == len(cmds) {
			parts = append(parts, fmt.Sprintf("no command is offered to %s: %s", g.agent, g.reason))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s%s %s not offered to %s: %s", strings.Join(names, ", "), more, verb, g.agent, g.reason))
	}
	return all, strings.Join(parts, "; ")
}
