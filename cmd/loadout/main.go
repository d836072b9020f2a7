// Command loadout previews, imports and serves the context that the Loadout
// controller publishes for a Workspace, using the same resolution code.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/sources"
)

// The full CLI verifies keyless signer identities too (hostd, materialize):
// the Sigstore libraries that do it bring gRPC, which the sidecar binary
// must not link, so only this binary sets the hook.
func init() { sigcheck.Keyless = skillsig.Keyless }

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// newRootCommand builds the loadout command tree. Subcommands are added in one
// place, so adding one is a one-line change.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "loadout",
		Short: "Preview and use the agent context Loadout publishes",
		Long: `loadout works with the context the Loadout controller publishes for a Workspace:
skills, prompt templates, instructions and the tool registry, resolved from
ordered roots into one ConfigMap.

It runs the controller's resolution code locally: preview what a Workspace
would publish from manifests or directories, import Agent Skills directories as
Skill manifests, and render templates or activate skills against a mounted
context directory.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newPreviewCommand())
	root.AddCommand(newImportCommand())
	root.AddCommand(newPushCommand())
	root.AddCommand(newRenderCommand())
	root.AddCommand(newActivateCommand())
	root.AddCommand(agentcmd.NewHostdCommand(sources.LoadFiller))
	root.AddCommand(newMaterializeCommand())
	root.AddCommand(agentcmd.NewSandboxCommand())
	root.AddCommand(agentcmd.NewHookCommand())
	root.AddCommand(agentcmd.NewVersionCommand())
	root.AddCommand(newShardsCommand())
	root.AddCommand(newAuditCommand())
	root.AddCommand(newTestCommand())
	root.AddCommand(newApproveCommand(), newDenyCommand())
	root.AddCommand(newMCPCommand())
	return root
}
