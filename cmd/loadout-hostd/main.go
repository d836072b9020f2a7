// Command loadout-hostd is the agent-pod sidecar: `loadout hostd` built
// without the rest of the CLI. It takes the same flags and serves the same
// API; its subcommands are the agents' command hooks and version, and
// nothing else (no materialize, no manager): the sidecar image holds this
// binary alone (Dockerfile, target hostd). Linking only the agent side (no
// Kubernetes client, no manifest resolution, no registry push) keeps the
// sidecar's idle memory and each command hook's start-up small; see
// docs/hostd.md. Its CA roots (the image has no bundle on disk) are
// installed on its first outbound https request, not at start
// (internal/caroots). External skill sources are fetched by a helper
// process, loadout-fetch, beside it in the image (internal/fetchhelper):
// the sidecar links no registry or git client, and verifies what the
// helper wrote.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/fetchhelper"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

func newRootCommand() *cobra.Command {
	helper := fetchhelper.DefaultPath()
	root := agentcmd.NewHostdCommand(func(c sourcecache.Config) (sourcecache.Filler, error) {
		return fetchhelper.New(context.Background(), helper, c)
	})
	root.Flags().StringVar(&helper, "fetch-helper", helper,
		"the program that fetches external skill sources into --source-cache, one run per fetch (the sidecar image's /loadout-fetch); hostd verifies what it wrote")
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
