package agentcmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/claudecode"
)

// NewHookCommand groups the agents' command hooks (docs/agents.md).
func NewHookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Answer an agent's hooks from hostd",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newClaudeCodeHookCommand(), newCodexHookCommand())
	return cmd
}

func newClaudeCodeHookCommand() *cobra.Command {
	var (
		client      claudecode.HostdClient
		h           claudecode.Hook
		passOnAllow bool
	)
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Claude Code command hook: tool calls and session events through hostd's policy",
		Long: `claude-code is a Claude Code command hook. It reads the hook input on stdin,
asks hostd (POST /v1/before for PreToolUse, POST /v1/after for PostToolUse and
PostToolUseFailure, POST /v1/events for SessionStart, UserPromptSubmit,
PreCompact and SessionEnd) and prints Claude Code's hook output. A denied
PreToolUse is a permissionDecision "deny" with hostd's reason, an ask "ask", a
rewrite updatedInput; an allowed one carries no decision, so Claude Code's own
permission rules and prompts still apply (--auto-allow answers "allow"
instead, which skips Claude Code's prompt). A refused prompt or compaction is
decision "block"; context is additionalContext. Other events are answered {}.
When hostd cannot be reached, answers an error, or the input cannot be read,
what the event guards is blocked with a reason: the hook fails closed. It
always exits 0, so Claude Code reads its answer.

hostd also answers Claude Code's http hooks itself (POST /v1/hooks/claude-code),
with no process per call; see docs/agents.md for both wirings. --timeout must
stay under the hook's timeout in Claude Code's settings.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h.Policy = client
			out := h.AnswerJSON(cmd.Context(), cmd.InOrStdin())
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.Flags().StringVar(&client.URL, "hostd-url", defaultHostdURL(), "hostd's base URL; $LOADOUT_HOSTD_URL sets the default")
	cmd.Flags().DurationVar(&client.Timeout, "timeout", claudecode.DefaultTimeout, "how long to wait for hostd; keep it under the hook's timeout in Claude Code's settings")
	cmd.Flags().StringVar(&h.MCPServer, "mcp-server", "loadout", "name of hostd's MCP server in Claude Code's MCP configuration; its tools mcp__<name>__<tool> are known to Loadout as <tool>")
	cmd.Flags().BoolVar(&client.Headless, "headless", false, "Claude Code runs without a user to ask (claude -p): a platform hook's ask routed to headless agents goes to the cluster's approvers (docs/hooks.md#approvals)")
	cmd.Flags().BoolVar(&h.AutoAllow, "auto-allow", false, "answer an allowed call with permissionDecision \"allow\", which skips Claude Code's own permission prompt (its deny and ask rules still apply)")
	// An allowed call carries no decision by default now; the old opt-out
	// stays accepted so existing settings keep working.
	cmd.Flags().BoolVar(&passOnAllow, "pass-on-allow", false, "no effect: an allowed call carries no decision unless --auto-allow")
	_ = cmd.Flags().MarkHidden("pass-on-allow")
	return cmd
}
