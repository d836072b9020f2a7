package hostd

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// BenchmarkMCPServerToolCall measures, side by side on loopback, one call of
// server-everything's echo tool (the pinned reference server, Node): called
// directly with the SDK's client (the floor), through hostd's POST
// /v1/tools/{name}, and through hostd's MCP tools/call. hostd's path adds
// the schema check, a CEL before hook, the after hook and its own MCP
// session to the server. Reports p50/p99 latency next to ns/op.
func BenchmarkMCPServerToolCall(b *testing.B) {
	srv := testnet.StartEverything(b)
	reg := contract.Registry{
		Tools: []contract.Tool{{Name: "ev_echo", Description: "Echo", Extension: "everything",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
			MCP:         &contract.ToolMCP{URL: srv.URL, Tool: "echo", TimeoutSeconds: 10}}},
		Hooks: []contract.Hook{{Extension: "everything", Name: "no-secrets", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10,
			CEL: &contract.CELHook{Expression: "!call.arguments.message.contains('SECRET')", Message: "no secrets"}}},
		Extensions: []string{"everything"},
	}
	_, ts, _ := newTestServer(b, reg)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	args := map[string]any{"message": "hello"}
	b.Run("direct-mcp-server", func(b *testing.B) {
		session := connectMCPAt(b, srv.URL)
		measure(b, func() { callEcho(b, session, "echo", args) })
	})
	b.Run("hostd-v1-tools", func(b *testing.B) {
		body := []byte(`{"call":{"id":"call-1","arguments":{"message":"hello"}}}`)
		measure(b, func() { postOK(b, client, ts.URL+"/v1/tools/ev_echo", body) })
	})
	b.Run("hostd-mcp", func(b *testing.B) {
		session := connectMCP(b, ts.URL, nil)
		measure(b, func() { callEcho(b, session, "ev_echo", args) })
	})
}

func connectMCPAt(b *testing.B, endpoint string) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

func callEcho(b *testing.B, s *mcp.ClientSession, name string, args map[string]any) {
	b.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
}
