package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/sources"
)

// newMaterializeCommand writes a mounted context as files agents read
// (docs/agents.md), once; `loadout hostd --materialize` keeps it current.
func newMaterializeCommand() *cobra.Command {
	var (
		dir, out   string
		claudeCode bool
		codex      bool
		hostdURL   string
		src        agentcmd.SourceFlags
		trust      agentcmd.ContextTrust
	)
	cmd := &cobra.Command{
		Use:   "materialize",
		Short: "Write a mounted context as an Agent Skills tree, prompt templates and AGENTS.md",
		Long: `Write the context mounted at --context-dir into --out as the files agents
already read:

  OUT/skills/<name>/SKILL.md   every winning skill (Agent Skills frontmatter) and its files
  OUT/prompts/<name>.md        every template as a Pi prompt template
  OUT/AGENTS.md                the platform's text only (as OUT/workspace-prompt.md)
  OUT/system-prompt.md         the published system prompt
  OUT/workspace-prompt.md      the platform's instructions, active skills, prompt guides and denied tools
  OUT/project-prompt.md        the tenants' instructions, active skills and prompt guides, each under
                               a heading naming its namespace: project content, never policy
  OUT/manifest.json            the published manifest (active skills, variables, registry)

Each name is a symlink through OUT/..data to one generation directory; an
update writes a new generation and swaps ..data with one rename, so an agent
that resolves ..data once never sees half of two contexts. Nothing outside OUT
is written. --claude-code adds what Claude Code reads:

  OUT/CLAUDE.md                the instructions, the always-active skills and the prompt guides
  OUT/commands/<name>.md       every template as a Claude Code command ($ARGUMENTS[i] for {{var}})
  OUT/managed-settings.json    for /etc/claude-code: every tool call through hostd's http hook
                               at --hostd-url, no other hooks, hostd's MCP server loaded up front
  OUT/managed-mcp.json         for /etc/claude-code: hostd's MCP server as the only one

docs/agents.md shows where each goes. With --codex, point --out at CODEX_HOME
(~/.codex): OUT/skills is a directory shared with Codex's own skills
(skills/.system), each Workspace skill a link in it, OUT/AGENTS.md holds what
CLAUDE.md does (instructions, always-active skills, prompt guides), and
OUT/hooks.json and OUT/requirements.toml run 'loadout hook codex' around every
tool call (docs/agents.md#codex).

Run it once in an init container, or use 'loadout hostd --materialize OUT' to
keep OUT current as the context changes. Skills with an external source
(spec.source) are fetched once per digest or commit into --source-cache,
verified, and written byte for byte with their modes; if one cannot be
fetched or verified, nothing is written and OUT keeps its last good tree.

Given the platform's public keys (--context-keys or $LOADOUT_CONTEXT_KEYS,
with --workspace NAMESPACE/NAME and, for a custom output name,
--context-configmap), the context is verified as hostd verifies it before
anything is written or fetched: one the manager did not sign for that
Workspace and ConfigMap is refused. Without keys nothing is checked (local
development with 'loadout preview' output).`,
		Example: `  loadout materialize --context-dir /var/run/loadout/context --out /var/run/loadout/tree`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := published.LoadDir(dir)
			if err != nil {
				return err
			}
			// Before anything of it is used or fetched: given the keys, a
			// context the manager did not sign for this Workspace writes
			// nothing.
			if err := trust.Verify(pc); err != nil {
				return err
			}
			fetcher, err := src.Fetcher(sources.LoadFiller)
			if err != nil {
				return err
			}
			fetched, err := fetcher.Complete(cmd.Context(), pc)
			if err != nil {
				return err
			}
			in, opts, err := fetched.Materialize(agentcmd.MaterializeOptions(claudeCode, codex, false, hostdURL))
			if err != nil {
				return err
			}
			tree, err := materialize.Build(cmd.Context(), in, opts)
			if err != nil {
				return err
			}
			res, err := materialize.Write(out, tree)
			if err != nil {
				return err
			}
			verb := "materialized"
			if !res.Changed {
				verb = "already current:"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s context %s in %s (%s)\n", verb, pc.Hash, out, res.Generation)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "context-dir", agentcmd.DefaultContextDir, "directory where the context ConfigMap is mounted")
	cmd.Flags().StringVar(&out, "out", "", "directory to write the tree into (created if missing)")
	cmd.Flags().BoolVar(&claudeCode, "claude-code", false, "also write Claude Code's CLAUDE.md, commands/ and managed settings")
	cmd.Flags().StringVar(&hostdURL, "hostd-url", materialize.DefaultHostdURL, "with --claude-code: hostd's base URL in the managed settings")
	cmd.Flags().BoolVar(&codex, "codex", false, "the Codex layout, for --out at CODEX_HOME: each skill linked into a skills directory shared with Codex's own, AGENTS.md as CLAUDE.md, hooks.json and requirements.toml")
	src.Add(cmd)
	trust.Add(cmd)
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
