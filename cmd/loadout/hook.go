package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/claudecode"
)

// newHookCommand groups the agents' command hooks (docs/agents.md).
func newHookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Answer an agent's tool-call hooks from hostd",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newClaudeCodeHookCommand(), newCodexHookCommand())
	return cmd
}

func newClaudeCodeHookCommand() *cobra.Command {
	h := claudecode.Hook{}
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Claude Code command hook: PreToolUse and PostToolUse through hostd",
		Long: `claude-code is a Claude Code command hook. It reads the hook input on stdin,
asks hostd (POST /v1/before for PreToolUse, POST /v1/after for PostToolUse) and
prints Claude Code's hook output: for PreToolUse a permissionDecision of
"allow" or "deny" with its reason. When hostd cannot be reached, answers an
error, or the input cannot be read, the call is denied with a reason: the hook
fails closed. It always exits 0, so Claude Code reads its answer.

Wire it in .claude/settings.json for every tool (matcher "*"); see
docs/agents.md. --timeout must stay under the hook's timeout there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := h.Answer(cmd.Context(), cmd.InOrStdin())
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.Flags().StringVar(&h.HostdURL, "hostd-url", defaultHostdURL(), "hostd's base URL; $LOADOUT_HOSTD_URL sets the default")
	cmd.Flags().StringVar(&h.MCPServer, "mcp-server", "loadout", "name of hostd's MCP server in Claude Code's MCP configuration; its tools mcp__<name>__<tool> are known to Loadout as <tool>")
	cmd.Flags().DurationVar(&h.Timeout, "timeout", 50*time.Second, "how long to wait for hostd; keep it under the hook's timeout in settings.json")
	cmd.Flags().BoolVar(&h.PassOnAllow, "pass-on-allow", false, "answer an allowed call without a permission decision, so Claude Code's own permission rules and prompts still apply")
	return cmd
}
