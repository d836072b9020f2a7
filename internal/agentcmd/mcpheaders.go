package agentcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
)

// mcpHeadersFlags configure where hostd gets the headers of MCP servers
// whose Extension sends headers from a Secret: the manager's endpoint.
type mcpHeadersFlags struct {
	url, ca, caFile, tokenFile string
}

func (f *mcpHeadersFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "mcp-headers-url", os.Getenv("LOADOUT_MCP_HEADERS_URL"),
		"the manager's MCP headers endpoint (default $LOADOUT_MCP_HEADERS_URL, which the agent-pod admission policy sets): hostd asks it for the headers of MCP servers whose Extension names spec.mcpServer.headersFrom, keeps them in memory for a minute and never logs them; empty: calls to such servers are blocked")
	fs.StringVar(&f.ca, "mcp-headers-ca", os.Getenv("LOADOUT_MCP_HEADERS_CA"),
		"the endpoint's certificate, PEM (default $LOADOUT_MCP_HEADERS_CA, which the agent-pod admission policy sets): the only certificate hostd trusts for it")
	fs.StringVar(&f.caFile, "mcp-headers-ca-file", "", "read --mcp-headers-ca from this file instead")
	fs.StringVar(&f.tokenFile, "mcp-headers-token-file", "",
		"projected ServiceAccount token of audience "+mcpheaders.Audience+" (bound to this pod, mounted into hostd alone) presented to the MCP headers endpoint; the agent-pod admission policy sets it")
}

// source is the HeaderSource the flags configure: nil without a URL (calls
// to servers that need headers are then blocked, naming why). A
// configuration hostd cannot use does not keep it from serving its policy:
// such calls are blocked naming the reason, and warn is told once.
func (f *mcpHeadersFlags) source(warn io.Writer, addresses map[string]string) mcpclient.HeaderSource {
	if f.url == "" {
		return nil
	}
	ca := []byte(f.ca)
	if f.caFile != "" {
		b, err := os.ReadFile(f.caFile)
		if err != nil {
			return f.broken(warn, fmt.Errorf("--mcp-headers-ca-file: %w", err))
		}
		ca = b
	}
	fetcher, err := mcpheaders.NewFetcher(mcpheaders.FetcherOptions{URL: f.url, CA: ca, TokenFile: f.tokenFile, Addresses: addresses})
	if err != nil {
		return f.broken(warn, err)
	}
	return fetcher
}

func (f *mcpHeadersFlags) broken(warn io.Writer, err error) mcpclient.HeaderSource {
	_, _ = fmt.Fprintf(warn, "loadout hostd: MCP headers: %v; calls to MCP servers that need headers are blocked\n", err)
	return mcpheaders.Broken(err)
}
