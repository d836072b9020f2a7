package agentcmd

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/codex"
)

func newCodexHookCommand() *cobra.Command {
	var (
		h      codex.Hook
		client claudecode.HostdClient
	)
	cmd := &cobra.Command{
		Use:   "codex",
		Short: "Codex command hook: tool calls and session events through hostd",
		Long: `codex is a Codex command hook. It reads the hook input on stdin, asks hostd
(POST /v1/before for PreToolUse, POST /v1/after for PostToolUse, POST
/v1/events for SessionStart, UserPromptSubmit and SessionEnd) and prints an
answer Codex accepts: for a denied or asked PreToolUse a permissionDecision
"deny" with hostd's reason, for a rewrite "allow" with updatedInput, for an
allowed one no decision ({}), so Codex's own approval and sandbox rules still
apply; a refused prompt is decision "block", context additionalContext. When
hostd cannot be reached, answers an error, or the input cannot be read, the
call or prompt is blocked with a reason: the hook fails closed. Other events
are answered {}. It always exits 0, because Codex runs a call whose hook
failed.

materialize --codex writes the hooks.json and requirements.toml that run it;
see docs/agents.md#codex. --timeout must stay under the hook's timeout there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Codex turns an ask into a deny: it has no one to ask.
			client.Headless = true
			h.Decide.Policy = client
			b, err := json.Marshal(h.Answer(cmd.Context(), cmd.InOrStdin()))
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	cmd.Flags().StringVar(&client.URL, "hostd-url", defaultHostdURL(), "hostd's base URL; $LOADOUT_HOSTD_URL sets the default")
	cmd.Flags().StringVar(&h.Decide.MCPServer, "mcp-server", "loadout", "name of hostd's MCP server in Codex's mcp_servers; its tools mcp__<name>__<tool> are known to Loadout as <tool>")
	cmd.Flags().DurationVar(&client.Timeout, "timeout", claudecode.DefaultTimeout, "how long to wait for hostd; keep it under the hook's timeout in hooks.json or requirements.toml")
	return cmd
}

// defaultHostdURL is where the agents' hooks find hostd: $LOADOUT_HOSTD_URL,
// else hostd's default address in an agent pod.
func defaultHostdURL() string {
	if u := os.Getenv("LOADOUT_HOSTD_URL"); u != "" {
		return u
	}
	return "http://127.0.0.1:8181"
}
