package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// mcpServer serves an SDK MCP server with the given tools (and page size)
// over streamable HTTP; wrap, when set, sees every request first.
func mcpServer(t *testing.T, tools []*mcp.Tool, pageSize int, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	for _, tool := range tools {
		srv.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	return testnet.ServeHandler(t, h).URL
}

func tool(name string, schema string) *mcp.Tool {
	if schema == "" {
		schema = `{"type":"object"}`
	}
	return &mcp.Tool{Name: name, Description: "a tool", InputSchema: json.RawMessage(schema)}
}

func discover(t *testing.T, url string, timeout time.Duration, sel mcpclient.Selection) error {
	t.Helper()
	doer := outbound.New(outbound.Options{MaxResponseBytes: 4 << 20})
	_, err := mcpclient.Discover(context.Background(), doer, mcpclient.Endpoint{URL: url, Timeout: timeout}, sel)
	return err
}

func wantErr(t *testing.T, err error, fragment string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), fragment) {
		t.Fatalf("error = %v, want one saying %q", err, fragment)
	}
}

// onToolsList answers tools/list with h instead of the server.
func onToolsList(h http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := make([]byte, 4096)
			n, _ := r.Body.Read(body)
			r.Body = http.MaxBytesReader(w, readerOf(body[:n], r), 1<<20)
			if strings.Contains(string(body[:n]), `"tools/list"`) {
				h(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestDiscover_AServerThatHangsIsRefusedAtTheDeadline(t *testing.T) {
	url := mcpServer(t, []*mcp.Tool{tool("a", "")}, 0, onToolsList(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	wantErr(t, discover(t, url, 300*time.Millisecond, mcpclient.Selection{Allow: []string{"a"}}), "deadline")
}

func TestDiscover_A100MBAnswerIsRefusedWithBoundedMemory(t *testing.T) {
	url := mcpServer(t, []*mcp.Tool{tool("a", "")}, 0, onToolsList(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(" ", 1<<20))
		for range 100 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := discover(t, url, 10*time.Second, mcpclient.Selection{Allow: []string{"a"}})
	runtime.ReadMemStats(&after)
	wantErr(t, err, "exceeds")
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("refusing a 100 MB answer allocated %d MB", grew>>20)
	}
}

func TestDiscover_TooManyToolsOrPagesAreRefused(t *testing.T) {
	var many []*mcp.Tool
	for i := range 2000 {
		many = append(many, tool(fmt.Sprintf("t%04d", i), ""))
	}
	// One page of 2,000 tools; a million would be refused by the answer's
	// byte cap before that.
	wantErr(t, discover(t, mcpServer(t, many, 5000, nil), 10*time.Second, mcpclient.Selection{Allow: []string{"t0001"}}), "more than 1024 tools")
	// 100 pages of 20.
	wantErr(t, discover(t, mcpServer(t, many, 20, nil), 10*time.Second, mcpclient.Selection{Allow: []string{"t0001"}}), "more than 16 pages")
}

func TestDiscover_BadAllowedToolsAreRefusedWithTheirNames(t *testing.T) {
	url := mcpServer(t, []*mcp.Tool{
		tool("good", ""),
		tool("bad-schema", `{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`),
		tool("dotted.name", ""),
		tool("ignored.because.not.allowed", `{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`),
	}, 0, nil)
	err := discover(t, url, 10*time.Second, mcpclient.Selection{Allow: []string{"good", "bad-schema", "dotted.name", "missing"}})
	for _, want := range []string{`"bad-schema": inputSchema`, `"dotted.name": name "dotted.name" is not a tool name`, `"missing" is allowed but the server does not offer it`} {
		wantErr(t, err, want)
	}
	if strings.Contains(err.Error(), "ignored.because") {
		t.Fatalf("a tool outside the allow list was judged: %v", err)
	}
	if err := discover(t, url, 10*time.Second, mcpclient.Selection{Allow: []string{"good"}, Prefix: strings.Repeat("p", 62)}); err == nil {
		t.Fatal("a prefix making the name longer than 64 characters was accepted")
	}
}

func TestCall_AHugeAnswerFailsTheCallClosed(t *testing.T) {
	url := mcpServer(t, []*mcp.Tool{tool("a", "")}, 0, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := make([]byte, 4096)
			n, _ := r.Body.Read(body)
			r.Body = readerOf(body[:n], r)
			if strings.Contains(string(body[:n]), `"tools/call"`) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(strings.Repeat("[", 2<<20)))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	core, err := mcpclient.NewUpstreams(outbound.New(outbound.Options{}), nil).Core(contract.Tool{Name: "a", MCP: &contract.ToolMCP{URL: url, Tool: "a", TimeoutSeconds: 5}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = core(context.Background(), exthost.ToolCall{ID: "1", Name: "a"})
	wantErr(t, err, "MCP server")
}
