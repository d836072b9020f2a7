// Command loadout-hostd is the agent-pod sidecar: `loadout hostd` built
// without the rest of the CLI. It takes the same flags and serves the same
// API; its subcommands are the agents' command hooks and version, and
// nothing else (no materialize, no manager): the sidecar image holds this
// binary alone (Dockerfile, target hostd). Linking only the agent side (no
// Kubernetes client, no manifest resolution, no registry push) keeps the
// sidecar's idle memory and each command hook's start-up small; see
// docs/hostd.md.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/agentcmd"
)

func newRootCommand() *cobra.Command {
	root := agentcmd.NewHostdCommand()
	root.Use = "loadout-hostd"
	root.Short = "The Loadout agent-side extension host (loadout hostd) as a lean sidecar binary"
	root.SilenceUsage, root.SilenceErrors = true, true
	root.AddCommand(agentcmd.NewHookCommand(), agentcmd.NewSandboxCommand(), agentcmd.NewVersionCommand())
	return root
}

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
