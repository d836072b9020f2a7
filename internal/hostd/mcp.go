package hostd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/mcpskills"
)

// MCPPath is where hostd serves its MCP endpoint (streamable HTTP) on its own
// loopback listener.
const MCPPath = "/mcp"

// emptyObjectSchema is the input schema of a runnable tool that declares
// none: MCP requires one, and {} as arguments is what such a tool gets.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// MCP session limits: each session costs memory (~12 KiB) until its client
// ends it (DELETE) or it idles out, and nothing else stops a local process
// opening them without end.
const (
	// DefaultMCPMaxSessions bounds the MCP sessions open at once: a few per
	// MCP client of the agent is plenty.
	DefaultMCPMaxSessions = 64
	// DefaultMCPSessionIdleTimeout closes MCP sessions that received no
	// request for this long (a client that went away without DELETE).
	DefaultMCPSessionIdleTimeout = 30 * time.Minute
)

// errMCPBatch refuses a JSON-RPC batch: every MCP call must come in its own
// POST, so each one takes a request slot (MCP 2025-06-18 removed batches).
var errMCPBatch = errors.New("JSON-RPC batches are not accepted: send one MCP request per POST")

// mcpTools keeps the MCP server's tool set equal to the served context's
// runnable tools. Any MCP client (Claude Code, Codex, Cursor, …) then gets the
// Workspace's tools with the hooks enforced inside hostd: tools/call takes
// the same path as POST /v1/tools/{name}.
type mcpTools struct {
	server *mcp.Server
	// listed maps each tool on the MCP server to the JSON of its definition,
	// so a reload touches only the tools that changed. Guarded by Server.mu.
	listed map[string]string
	// prompts maps each prompt on the MCP server to the JSON of its
	// template (mcp_prompts.go). Guarded by Server.mu.
	prompts map[string]string
	// skills is the served context's skill catalog (internal/mcpskills);
	// skillResources maps each listed SKILL.md resource to the JSON of its
	// definition, and skipped the skills left out, with why. The last two
	// are guarded by Server.mu.
	skills         atomic.Pointer[mcpskills.Catalog]
	skillResources map[string]string
	skipped        map[string]error
	// readSkillFile reads a skill file for the listed SKILL.md resources.
	readSkillFile mcp.ResourceHandler
}

// mcpInstructions is what an MCP client is told at initialization: how to
// use each thing the server offers.
const mcpInstructions = "Tools, prompts and skills of this Loadout Workspace. Every tool call is checked against its input schema and the Workspace's policy hooks before it runs. " +
	"Skills hold instructions for specific tasks: skills/list (or resources/list) names them, and resources/read of skill://NAME/SKILL.md reads one before its task; its other files are skill://NAME/PATH."

func (s *Server) newMCPServer(version string) *mcpTools {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}}
	caps.AddExtension(mcpskills.Extension, map[string]any{"directoryRead": true})
	srv := mcp.NewServer(&mcp.Implementation{Name: "loadout", Title: "Loadout Workspace tools", Version: version},
		&mcp.ServerOptions{
			Instructions: mcpInstructions,
			// Clients learn what hostd offers even before a context loads,
			// and get list_changed notifications when a reload changes it.
			Capabilities:       caps,
			SubscribeHandler:   s.subscribeSkill,
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
	srv.AddReceivingMiddleware(s.mcpMetrics)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: keptResultURIPrefix + "{id}", Name: "truncated-result", MIMEType: "application/json",
		Description: "The whole answer of a tool call whose answer was truncated to the tool's output limit, kept for a while (the truncation marker names it)."}, s.mcpReadKeptResult)
	return &mcpTools{server: srv, listed: map[string]string{}, prompts: map[string]string{}, skillResources: map[string]string{}}
}

// mcpHandler serves MCP's streamable HTTP transport, one request per POST
// (a JSON-RPC batch is refused: 200 tools/call in one POST would otherwise
// run from a single request slot), with at most Limits.MCPMaxSessions
// sessions, each closed after Limits.MCPSessionIdleTimeout without a request.
func (s *Server) mcpHandler() http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: s.opts.Limits.MCPSessionIdleTimeout, MaxRequestBodyBytes: MaxBodyBytes})
	maxSessions := s.opts.Limits.MCPMaxSessions
	var (
		mu      sync.Mutex
		opening int // session-less POSTs being served: each may open a session
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			sdk.ServeHTTP(w, r)
			return
		}
		body := bufio.NewReaderSize(r.Body, 64)
		r.Body = struct {
			io.Reader
			io.Closer
		}{body, r.Body}
		if isJSONArray(body) {
			writeJSONRPCError(w, http.StatusBadRequest, errMCPBatch)
			return
		}
		if r.Header.Get("Mcp-Session-Id") != "" {
			sdk.ServeHTTP(w, r)
			return
		}
		// A POST without a session opens one: count the open sessions and
		// the ones being opened against the cap.
		mu.Lock()
		open := 0
		for range s.mcp.server.Sessions() {
			open++
		}
		if open+opening >= maxSessions {
			mu.Unlock()
			writeJSONRPCError(w, http.StatusServiceUnavailable, fmt.Errorf(
				"hostd has %d MCP sessions open, its limit (--mcp-max-sessions=%d): end a session (DELETE) or wait for an idle one to close (--mcp-session-idle-timeout=%s)",
				open, maxSessions, s.opts.Limits.MCPSessionIdleTimeout))
			return
		}
		opening++
		mu.Unlock()
		defer func() { mu.Lock(); opening--; mu.Unlock() }()
		sdk.ServeHTTP(w, r)
	})
}

// isJSONArray reports whether the JSON text body starts with an array,
// looking past leading white space without consuming it.
func isJSONArray(body *bufio.Reader) bool {
	for n := 1; ; n++ {
		peek, err := body.Peek(n)
		if len(peek) < n {
			return false
		}
		switch peek[n-1] {
		case ' ', '\t', '\r', '\n':
			if err != nil || n == body.Size() {
				return false
			}
			continue
		case '[':
			return true
		default:
			return false
		}
	}
}

// writeJSONRPCError answers a refused MCP POST with a JSON-RPC error (id
// null), which MCP clients show, and an HTTP status saying why.
func writeJSONRPCError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32600, "message": err.Error()}})
}

// syncMCP updates the MCP server's tools to snap's runnable tools, and its
// prompts to snap's templates. The caller holds s.mu, so reloads apply in
// order.
func (s *Server) syncMCP(ctx context.Context, snap *snapshot) {
	defs := make([]string, len(snap.runnable))
	for i, t := range snap.runnable {
		def, _ := json.Marshal(mcpTool(t))
		defs[i] = string(def)
	}
	syncListed(s.mcp.listed, len(snap.runnable), func(i int) (string, string) { return snap.runnable[i].Name, defs[i] },
		s.mcp.server.RemoveTools,
		func(i int) { s.mcp.server.AddTool(mcpTool(snap.runnable[i]), s.mcpCall(snap.runnable[i].Name)) })
	s.syncMCPPrompts(snap)
	s.syncMCPSkills(ctx, snap)
}

// syncListed brings a set of entries on the MCP server (listed: name to the
// JSON of its definition) to the n entries of entry, in their order: entries
// gone are removed, new or changed ones (re)added, unchanged ones left alone,
// so a reload notifies clients only of what changed.
func syncListed(listed map[string]string, n int, entry func(i int) (name, def string), remove func(...string), add func(i int)) {
	want := make(map[string]bool, n)
	for i := range n {
		name, _ := entry(i)
		want[name] = true
	}
	var gone []string
	for name := range listed {
		if !want[name] {
			gone = append(gone, name)
			delete(listed, name)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for i := range n {
		name, def := entry(i)
		if listed[name] == def {
			continue
		}
		add(i)
		listed[name] = def
	}
}

// mcpTool is a registry tool as MCP lists it: name, description, input
// schema, its hints as annotations, and a serial tool's execution mode in
// _meta (MCP has no field for it; clients that schedule by it read it there).
func mcpTool(t contract.Tool) *mcp.Tool {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = emptyObjectSchema
	}
	tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
	if t.ReadOnly || t.Destructive != nil || t.Idempotent || t.OpenWorld != nil {
		tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive,
			IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld}
	}
	if t.ExecutionMode != "" {
		tool.Meta = mcp.Meta{ExecutionModeMetaKey: t.ExecutionMode}
	}
	return tool
}

// ExecutionModeMetaKey is the _meta key of an MCP tool's execution mode.
const ExecutionModeMetaKey = "loadout.dev/executionMode"

// mcpCall handles tools/call for one tool: the arguments become a call with a
// fresh id, run through runTool on the context current at the call. A
// refused, invalid, blocked or failed call is a tool result with isError, so
// the model sees why, as MCP asks of tool errors.
func (s *Server) mcpCall(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		snap := s.current.Load()
		if snap == nil {
			return errorToolResult("no context loaded yet"), nil
		}
		if err := s.policyRefused(); err != nil {
			s.metrics.toolRuns.WithLabelValues("denied").Inc()
			return errorToolResult(err.Error()), nil
		}
		call := exthost.ToolCall{ID: newMCPCallID(), Name: name}
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			if err := json.Unmarshal(args, &call.Arguments); err != nil {
				return errorToolResult(fmt.Sprintf("arguments of tool %q must be a JSON object: %v", name, err)), nil
			}
		}
		if req.Session != nil {
			ctx = context.WithValue(ctx, resultOwnerKey{}, mcpResultOwner(req.Session.ID()))
		}
		resp, err := s.runTool(ctx, snap, call)
		if err != nil {
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
		// An MCP server's structured result goes back as such, not only
		// in _meta, so clients that read structuredContent get it.
		out.StructuredContent = resp.Result.Details[mcpclient.StructuredContentKey]
	}
	if len(resp.Diagnostics) > 0 {
		out.Meta["loadout.dev/diagnostics"] = resp.Diagnostics
	}
	return out
}

func mcpContent(c exthost.Content) mcp.Content {
	data, dataErr := base64.StdEncoding.DecodeString(c.Data)
	switch {
	case c.Type == "image" && dataErr == nil:
		return &mcp.ImageContent{Data: data, MIMEType: c.MimeType}
	case c.Type == "audio" && dataErr == nil:
		return &mcp.AudioContent{Data: data, MIMEType: c.MimeType}
	case c.Type == "resource_link" && c.URI != "":
		return &mcp.ResourceLink{URI: c.URI, Name: c.Text, MIMEType: c.MimeType}
	case c.Type == "resource" && c.URI != "" && (c.Data == "" || dataErr == nil):
		r := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MimeType, Text: c.Text}
		if c.Data != "" {
			r.Blob = data
		}
		return &mcp.EmbeddedResource{Resource: r}
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
