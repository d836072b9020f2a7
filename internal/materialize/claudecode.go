package materialize

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/agentcommands"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// The Claude Code layout (Options.ClaudeCode): what Claude Code reads, in the
// names it reads them by. docs/agents.md shows where each goes.
const (
	// ClaudeFile is Claude Code's memory: the instructions, the always-active
	// skills and the extensions' prompt guides, the parts of the system
	// prompt Pi gets from the Pi package.
	ClaudeFile = "CLAUDE.md"
	// CommandsDir holds each template as a Claude Code slash command.
	CommandsDir = "commands"
	// ManagedSettingsFile is for /etc/claude-code/managed-settings.json: the
	// hooks through hostd, which users cannot add to or remove, and hostd's
	// MCP server.
	ManagedSettingsFile = "managed-settings.json"
	// ManagedMCPFile is for /etc/claude-code/managed-mcp.json: hostd's MCP
	// server as the only one Claude Code may use.
	ManagedMCPFile = "managed-mcp.json"
	// DefaultHostdURL is hostd's address in an agent pod.
	DefaultHostdURL = "http://127.0.0.1:8181"
	// claudeCodeHookPath and mcpPath are hostd's endpoints the settings name.
	claudeCodeHookPath = "/v1/hooks/claude-code"
	mcpPath            = "/mcp"
	// claudeHookTimeout is the seconds Claude Code waits for a hook answer:
	// above hostd's longest hook timeout, so hostd answers first.
	claudeHookTimeout = 60
)

// claudeCodeLinks are the top-level names the Claude Code layout adds.
var claudeCodeLinks = []string{ClaudeFile, CommandsDir, ManagedMCPFile, ManagedSettingsFile}

// addClaudeCode adds the Claude Code layout's files; memory is
// workspaceMemory's text, CLAUDE.md.
// program runs the SessionStart command hook: "loadout" from the PATH, or
// the tree's own (ManagedEtcHookProgram). headless marks the hook URL
// ?headless=true (a bound pod's tree, ManagedEtc).
func (b *builder) addClaudeCode(in Input, memory, hostdURL, program string, headless bool) error {
	b.add(ClaudeFile, []byte(memory), 0o644)
	for _, t := range in.Templates {
		if !agentcommands.OfferedTo(agentcommands.ClaudeCode, t.Steps) {
			// Not a command that silently drops its tool steps: the
			// Workspace's CommandsOffered condition says why it is absent.
			continue
		}
		md, err := claudeCommand(t, in.Templates)
		if err != nil {
			return fmt.Errorf("template %q: %w", t.Name, err)
		}
		b.add(path.Join(CommandsDir, claudeCommandName(t.Name, in.Skills)+".md"), md, 0o644)
	}
	if hostdURL == "" {
		hostdURL = DefaultHostdURL
	}
	hostdURL = strings.TrimRight(hostdURL, "/")
	settings, err := json.MarshalIndent(claudeManagedSettings(hostdURL, program, headless, in.Manifest.Registry.Sandbox), "", "  ")
	if err != nil {
		return err
	}
	b.add(ManagedSettingsFile, append(settings, '\n'), 0o644)
	mcp, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"loadout": claudeMCPServer(hostdURL)}}, "", "  ")
	if err != nil {
		return err
	}
	b.add(ManagedMCPFile, append(mcp, '\n'), 0o644)
	return b.err
}

// claudeCommandName is the command a template becomes. Claude Code has one
// slash namespace for skills and commands, and a skill wins its name, so a
// template named like one of the skills (the samples' review) becomes
// /<name>-template; its MCP prompt keeps the name (/mcp__loadout__<name>).
func claudeCommandName(template string, skills []contract.SkillDoc) string {
	if slices.ContainsFunc(skills, func(s contract.SkillDoc) bool { return s.Name == template }) {
		return template + "-template"
	}
	return template
}

// claudeCommand renders a template as a Claude Code command. Claude Code
// fills $ARGUMENTS (everything typed after the command) and $ARGUMENTS[0],
// $ARGUMENTS[1], … (one word each, counted from 0), not {{var}}: a template
// with one variable gets $ARGUMENTS, one with more gets $ARGUMENTS[i] for
// its i-th variable in the order of its argument-hint, so "/review a.go bob"
// reads as file=a.go owner=bob, as in Pi. The placeholders are replaced by
// the code hostd renders templates with. A command with render steps (and
// no tool steps: those are not offered) is their texts in order, as hostd
// plans it.
func claudeCommand(t contract.TemplateDoc, all []contract.TemplateDoc) ([]byte, error) {
	args := make(map[string]string, len(t.Variables))
	hints := make([]string, 0, len(t.Variables))
	for i, v := range t.Variables {
		args[v] = "$ARGUMENTS[" + strconv.Itoa(i) + "]"
		hints = append(hints, "<"+v+">")
	}
	if len(t.Variables) == 1 {
		args[t.Variables[0]] = "$ARGUMENTS"
	}
	plan, err := resources.PlanCommand(t.Name, t.Body, t.Steps, func(name string) (string, bool) {
		i := slices.IndexFunc(all, func(o contract.TemplateDoc) bool { return o.Name == name })
		if i < 0 {
			return "", false
		}
		return all[i].Body, true
	}, args)
	if err != nil {
		return nil, err
	}
	body := plan.Text
	fm := promptFrontmatter{Description: t.Description, ArgumentHint: strings.Join(hints, " ")}
	if fm == (promptFrontmatter{}) {
		return []byte(body), nil
	}
	return skillmd.WithFrontmatter(fm, body)
}

// claudeManagedSettings is managed-settings.json. Every tool call and every
// session event goes through hostd's http hook; onFailure "block" makes an
// event that guards something (a tool call, a prompt, a compaction) that
// hostd does not answer (down, timed out, an error status) a refusal, where
// Claude Code's default lets it go on. Observers (after hooks, SessionEnd)
// and Stop do not block. SessionStart is the command hook: Claude Code runs no http
// hook there. allowManagedHooksOnly drops the hooks of user, project and
// plugin settings, so nothing can answer "allow" around hostd. With a
// declared sandbox, Claude Code's own sandbox is switched on from it
// (claudeSandbox) and bypass-permissions mode is disabled.
//
// headless puts ?headless=true on the hook URL: one managed file serves
// `claude -p` and an interactive session alike, and Claude Code's hook
// input does not say which runs, so in a bound pod (ManagedEtc) every
// session counts as headless and a platform ask with approvers (route
// Headless, the default) reaches them instead of becoming `claude -p`'s
// silent deny. An interactive user there waits on the approvers too:
// stricter, never looser (docs/hooks.md, "Approvals").
func claudeManagedSettings(hostdURL, program string, headless bool, sandbox *contract.Sandbox) map[string]any {
	url := hostdURL + claudeCodeHookPath
	if headless {
		url += "?headless=true"
	}
	hook := func(matcher string, block bool) []any {
		h := map[string]any{"type": "http", "url": url, "timeout": claudeHookTimeout}
		if block {
			h["onFailure"] = "block"
		}
		entry := map[string]any{"hooks": []any{h}}
		if matcher != "" {
			entry["matcher"] = matcher
		}
		return []any{entry}
	}
	sessionStart := map[string]any{"type": "command", "command": program + " hook claude-code --hostd-url " + hostdURL,
		"timeout": claudeHookTimeout}
	settings := map[string]any{
		"allowManagedHooksOnly": true,
		"hooks": map[string]any{
			"PreToolUse":         hook("*", true),
			"PostToolUse":        hook("*", false),
			"PostToolUseFailure": hook("*", false),
			"UserPromptSubmit":   hook("", true),
			"PreCompact":         hook("", true),
			"SessionEnd":         hook("", false),
			// A Stop hook's denial keeps the agent going; hostd not
			// answering must not, so these do not block on failure.
			"Stop":         hook("", false),
			"SubagentStop": hook("", false),
			"SessionStart": []any{map[string]any{"hooks": []any{sessionStart}}},
		},
		"managedMcpServers": map[string]any{"loadout": claudeMCPServer(hostdURL)},
	}
	if sb := claudeSandbox(sandbox, hostOf(hostdURL)); sb != nil {
		settings["sandbox"] = sb
		settings["permissions"] = map[string]any{"disableBypassPermissionsMode": "disable"}
	}
	return settings
}

// hostOf is the host of a URL ("" if it does not parse).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// claudeMCPServer is hostd's MCP server entry. alwaysLoad lists its tools
// with their schemas up front instead of behind Claude Code's tool search.
func claudeMCPServer(hostdURL string) map[string]any {
	return map[string]any{"type": "http", "url": hostdURL + mcpPath, "alwaysLoad": true}
}
