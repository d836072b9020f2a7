package testnet

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DriftingServer is an in-process MCP server (the MCP Go SDK's) with one
// tool, echo, whose description a test changes between discoveries: a
// "rug pull".
type DriftingServer struct {
	// URL is its MCP endpoint; Addr its host:port.
	URL, Addr string
	srv       *mcp.Server
}

// StartDrifting serves echo with description on a loopback port until the
// test ends.
func StartDrifting(t testing.TB, description string) *DriftingServer {
	t.Helper()
	d := &DriftingServer{srv: mcp.NewServer(&mcp.Implementation{Name: "drifting", Version: "1"}, nil)}
	d.SetDescription(description)
	// Reached as a Service (its Host header the Service's name), as in a
	// cluster: the SDK's localhost-only guard would refuse that.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.srv },
		&mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	ts := ServeHandler(t, h)
	d.URL = ts.URL + "/mcp"
	d.Addr = strings.TrimPrefix(ts.URL, "http://")
	return d
}

// SetDescription replaces echo's definition with one of this description:
// the next tools/list says it.
func (d *DriftingServer) SetDescription(description string) {
	d.srv.AddTool(&mcp.Tool{Name: "echo", Description: description,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
}
