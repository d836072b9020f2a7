package hostd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// MCPPath is where hostd serves its MCP endpoint (streamable HTTP) on its own
// loopback listener.
const MCPPath = "/mcp"

// emptyObjectSchema is the input schema of a runnable tool that declares
// none: MCP requires one, and {} as arguments is what such a tool gets.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// mcpSessionTimeout closes MCP sessions a client abandoned without DELETE.
const mcpSessionTimeout = 30 * time.Minute

// mcpTools keeps the MCP server's tool set equal to the served context's
// runnable tools. Any MCP client (Claude Code, Codex, Cursor, …) then gets the
// Workspace's tools with the hooks enforced inside hostd: tools/call takes
// the same path as POST /v1/tools/{name}.
type mcpTools struct {
	server *mcp.Server
	// listed maps each tool on the MCP server to the JSON of its definition,
	// so a reload touches only the tools that changed. Guarded by Server.mu.
	listed map[string]string
}

func newMCPServer(version string) *mcpTools {
	srv := mcp.NewServer(&mcp.Implementation{Name: "loadout", Title: "Loadout Workspace tools", Version: version},
		&mcp.ServerOptions{
			Instructions: "Tools of this Loadout Workspace. Every call is checked against its input schema and the Workspace's policy hooks before it runs.",
			// Clients learn that hostd has tools even before a context loads,
			// and get tools/list_changed when a reload changes them.
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		})
	return &mcpTools{server: srv, listed: map[string]string{}}
}

// mcpHandler serves MCP's streamable HTTP transport.
func (s *Server) mcpHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: mcpSessionTimeout, MaxRequestBodyBytes: MaxBodyBytes})
}

// syncMCP updates the MCP server's tools to snap's runnable tools: tools gone
// from the registry are removed, new or changed ones (re)added. The caller
// holds s.mu, so reloads apply in order.
func (s *Server) syncMCP(snap *snapshot) {
	want := make(map[string]string, len(snap.runnable))
	var remove []string
	for _, t := range snap.runnable {
		def, _ := json.Marshal(mcpTool(t))
		want[t.Name] = string(def)
	}
	for name := range s.mcp.listed {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
			delete(s.mcp.listed, name)
		}
	}
	if len(remove) > 0 {
		s.mcp.server.RemoveTools(remove...)
	}
	for _, t := range snap.runnable {
		if s.mcp.listed[t.Name] == want[t.Name] {
			continue
		}
		s.mcp.server.AddTool(mcpTool(t), s.mcpCall(t.Name))
		s.mcp.listed[t.Name] = want[t.Name]
	}
}

// mcpTool is a registry tool as MCP lists it: name, description, input
// schema, and the read-only hint.
func mcpTool(t contract.Tool) *mcp.Tool {
	schema := json.RawMessage(t.InputSchema)
	if len(schema) == 0 {
		schema = emptyObjectSchema
	}
	tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
	if t.ReadOnly {
		tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return tool
}

// mcpCall handles tools/call for one tool: the arguments become a call with a
// fresh id, run through runTool on the context current at the call. A
// refused, invalid, blocked or failed call is a tool result with isError, so
// the model sees why, as MCP asks of tool errors.
func (s *Server) mcpCall(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		code := "200"
		defer func() {
			s.metrics.duration.WithLabelValues("mcp_tools_call").Observe(time.Since(start).Seconds())
			s.metrics.requests.WithLabelValues("mcp_tools_call", code).Inc()
		}()
		snap := s.current.Load()
		if snap == nil {
			code = "503"
			return errorToolResult("no context loaded yet"), nil
		}
		call := exthost.ToolCall{ID: newMCPCallID(), Name: name}
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			if err := json.Unmarshal(args, &call.Arguments); err != nil {
				code = "400"
				return errorToolResult(fmt.Sprintf("arguments of tool %q must be a JSON object: %v", name, err)), nil
			}
		}
		resp, err := s.runTool(ctx, snap, call)
		if err != nil {
			code = "404"
			if !errors.Is(err, errNotRunnable) {
				code = "500"
			}
			return errorToolResult(err.Error()), nil
		}
		return mcpResult(resp), nil
	}
}

// mcpResult converts a paired tool result into MCP's shape. Details and the
// call's id travel in _meta, for clients that show or log them.
func mcpResult(resp ToolRunResponse) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: resp.Result.IsError, Content: []mcp.Content{}}
	for _, c := range resp.Result.Content {
		out.Content = append(out.Content, mcpContent(c))
	}
	out.Meta = mcp.Meta{"loadout.dev/toolCallId": resp.Call.ID, "loadout.dev/executed": resp.Executed}
	if len(resp.Result.Details) > 0 {
		out.Meta["loadout.dev/details"] = resp.Result.Details
	}
	if len(resp.Diagnostics) > 0 {
		out.Meta["loadout.dev/diagnostics"] = resp.Diagnostics
	}
	return out
}

func mcpContent(c exthost.Content) mcp.Content {
	if c.Type == "image" {
		if data, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
			return &mcp.ImageContent{Data: data, MIMEType: c.MimeType}
		}
	}
	if c.Type == "text" || c.Text != "" {
		return &mcp.TextContent{Text: c.Text}
	}
	b, _ := json.Marshal(c)
	return &mcp.TextContent{Text: string(b)}
}

func errorToolResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// newMCPCallID gives an MCP call the id hooks and the Service see: MCP's
// tools/call carries none of its own.
func newMCPCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}
