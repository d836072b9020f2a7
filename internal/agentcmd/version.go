package agentcmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/buildinfo"
)

// NewVersionCommand prints the version, commit and build date stamped by
// `make build` or the Dockerfile.
func NewVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Get()
			switch output {
			case "":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), "loadout", info)
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return fmt.Errorf("--output=%q: must be empty or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: empty for one line, or json")
	return cmd
}
