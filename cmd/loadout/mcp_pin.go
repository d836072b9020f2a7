package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/mcppin/pinfile"
)

func newMCPCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "Work with the MCP servers behind Extensions"}
	cmd.AddCommand(newMCPPinCommand())
	return cmd
}

func newMCPPinCommand() *cobra.Command {
	var (
		file, url, name, caFile string
		headers                 []string
		toStdout                bool
		timeout                 time.Duration
	)
	cmd := &cobra.Command{
		Use:   "pin -f EXTENSION.yaml [--url URL]",
		Short: "List a live MCP server's tools and write their pins into an Extension's YAML",
		Long: `List the tools of the MCP server an Extension names and write the digest of
each allowed tool's definition into spec.mcpServer.tools.pins of the
Extension's YAML file, so accepting a changed tool is a reviewed Git diff.

The digest is the one the manager computes on discovery (sha256 over the
canonical JSON of the tool's name, description, input and output schema
and annotations; docs/concepts.md, "Pinned MCP tools"). Only the pins field
is rewritten: the rest of the file, comments included, stays (YAML is
re-indented by two spaces). A tool whose description breaks the rule
declared tools obey (R-TL-1) is refused, as the manager would refuse it.

--url is where to reach the server from here (a port-forward of its
Service, say); without it spec.mcpServer.url is used. --header adds a
request header ("Name: value"), as headersFrom's Secret would.`,
		Example: `  kubectl -n tools port-forward svc/github-mcp 8443:443 &
  loadout mcp pin -f platform/github-mcp.yaml --url https://localhost:8443/mcp --header "Authorization: Bearer $TOKEN"
  git diff platform/github-mcp.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f EXTENSION.yaml is required")
			}
			var ca []byte
			if caFile != "" {
				var err error
				if ca, err = os.ReadFile(caFile); err != nil {
					return err
				}
			}
			h, err := pinfile.ParseHeaders(headers)
			if err != nil {
				return err
			}
			src, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			out, err := pinfile.Pin(cmd.Context(), src, pinfile.Target{Name: name, URL: url, Headers: h, CABundle: ca, Timeout: timeout}, cmd.ErrOrStderr())
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if toStdout {
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			return writeFileKeepMode(file, out)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the Extension's YAML file (it may hold other documents)")
	cmd.Flags().StringVar(&url, "url", "", "the MCP endpoint to list (default: spec.mcpServer.url)")
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, `a request header "Name: value" (repeatable)`)
	cmd.Flags().StringVar(&caFile, "ca-file", "", "PEM bundle verifying an https endpoint (default: the system roots)")
	cmd.Flags().StringVar(&name, "name", "", "the Extension's metadata.name, when the file holds several with spec.mcpServer")
	cmd.Flags().BoolVar(&toStdout, "print", false, "print the updated YAML on stdout instead of rewriting the file")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "bound of each request to the server")
	return cmd
}

// writeFileKeepMode replaces path's content, keeping its mode.
func writeFileKeepMode(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, info.Mode().Perm())
}
