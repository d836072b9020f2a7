package materialize

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// The managed /etc layout (Options.ManagedEtc): the tree a bound pod mounts
// whole, read-only, at the paths where the stock agents read their
// organisation's policy. A volume may be mounted at several paths, and a
// whole-volume mount (no subPath) keeps following the tree's generation swap,
// so every name below is a stable top-level link into the current generation,
// like the tree's other names. docs/agents.md#every-agent-in-a-bound-pod.
const (
	// EtcClaudeCode is where Claude Code on Linux reads managed settings,
	// managed memory (CLAUDE.md) and managed skills and commands
	// (.claude/skills, .claude/commands).
	EtcClaudeCode = "/etc/claude-code"
	// EtcCodex is where Codex reads its managed requirements
	// (requirements.toml) and its system configuration (config.toml).
	EtcCodex = "/etc/codex"
	// ClaudeDotDir holds the links skills -> ../skills and commands ->
	// ../commands inside each generation: Claude Code's managed skills and
	// commands at /etc/claude-code/.claude/{skills,commands}.
	ClaudeDotDir = ".claude"
	// CodexConfigFile is Codex's system configuration at /etc/codex: hostd's
	// MCP server. (In CODEX_HOME, config.toml is the user's, so the Codex
	// layout never writes it.)
	CodexConfigFile = "config.toml"
	// ManagedEtcHookProgram is the tree's own copy of the hook program
	// (InstallHookProgram: the hostd binary, whose `hook claude-code` and
	// `hook codex` the hooks run), outside the generations. The hooks name
	// it at each agent's mount path, so an agent image needs no loadout on
	// its PATH; were it missing, Codex would run every call (its hooks fail
	// open).
	ManagedEtcHookProgram = "bin/loadout"
)

// GenLink is a symbolic link inside a generation: Path (relative to the
// generation) points at Target (relative to Path's directory).
type GenLink struct{ Path, Target string }

// GenLinks returns the tree's links inside the generation.
func (t *Tree) GenLinks() []GenLink { return slices.Clone(t.genLinks) }

// managedEtcLayout adds the names that /etc/claude-code and /etc/codex need
// beyond the Claude Code layout, and returns the top-level links.
// platform is the platform's text (Memory.Platform, CLAUDE.md): Codex reads
// no AGENTS.md from /etc/codex, so requirements.toml carries it as
// additional_developer_instructions, which Codex gives the model as
// <managed_developer_instructions> in a developer message.
func managedEtcLayout(b *builder, links []string, hostdURL, platform string, sandbox *contract.Sandbox) []string {
	if hostdURL == "" {
		hostdURL = DefaultHostdURL
	}
	hostdURL = strings.TrimRight(hostdURL, "/")
	codexCommand := path.Join(EtcCodex, ManagedEtcHookProgram) + " hook codex --hostd-url " + hostdURL
	req := codexRequirements(codexCommand, sandbox)
	if strings.TrimSpace(platform) != "" {
		req = strings.Replace(req, "allow_managed_hooks_only = true\n",
			"allow_managed_hooks_only = true\n# The platform's text (AGENTS.md, CLAUDE.md): organisation policy.\nadditional_developer_instructions = "+tomlString(platform)+"\n", 1)
	}
	b.add(CodexRequirementsFile, []byte(req), 0o644)
	b.add(CodexConfigFile, []byte(codexConfig(hostdURL)), 0o644)
	b.genLinks = append(b.genLinks,
		GenLink{Path: path.Join(ClaudeDotDir, CommandsDir), Target: path.Join("..", CommandsDir)},
		GenLink{Path: path.Join(ClaudeDotDir, SkillsDir), Target: path.Join("..", SkillsDir)})
	links = append(links, ClaudeDotDir, CodexConfigFile, CodexRequirementsFile)
	slices.Sort(links)
	return links
}

// tomlString is s as a TOML basic string: JSON's escapes are TOML's, but
// for DEL, which TOML wants escaped too.
func tomlString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return strings.ReplaceAll(string(b), "\x7f", `\u007f`)
}

// codexConfig is /etc/codex/config.toml: hostd's MCP server, so Codex offers
// the runnable tools (mcp__loadout__<tool>) through hostd's hooks.
func codexConfig(hostdURL string) string {
	return "# Codex system configuration from Loadout (docs/agents.md#every-agent-in-a-bound-pod).\n" +
		"[mcp_servers.loadout]\nurl = " + strconv.Quote(hostdURL+mcpPath) + "\n"
}

// InstallHookProgram copies the running program (the hostd binary, which
// answers `hook claude-code` and `hook codex`) to out/ManagedEtcHookProgram,
// by rename, so an agent running the previous copy keeps it. It streams the
// copy: hostd's memory limit never holds the binary.
func InstallHookProgram(out string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install the hook program: %w", err)
	}
	dst := filepath.Join(out, filepath.FromSlash(ManagedEtcHookProgram))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("install the hook program: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("install the hook program: %w", err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".loadout-*")
	if err != nil {
		return fmt.Errorf("install the hook program: %w", err)
	}
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("install the hook program: %w", err)
	}
	return nil
}
