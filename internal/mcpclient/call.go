package mcpclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// StructuredContentKey is the key of a result's Details that holds the
// server's structuredContent, for agents and hostd's own MCP endpoint.
const StructuredContentKey = "structuredContent"

// SessionIdleTimeout is how long an Upstream keeps a session no call uses:
// a context replaced by a reload leaves its Upstreams behind, and their
// sessions end on their own.
const SessionIdleTimeout = 5 * time.Minute

// Upstream is one MCP server hostd calls tools on. It keeps one session,
// opened at the first call, ended after SessionIdleTimeout without one, and
// replaced after any failure: a server that forgot the session (404) gets
// the call again on a new session (it never ran it); after any other
// failure the call is not repeated, since the server may have run it.
type Upstream struct {
	doer outbound.Doer
	ep   Endpoint

	mu      sync.Mutex
	session *mcp.ClientSession
	idle    *time.Timer
}

// NewUpstream returns the Upstream of ep; it contacts nothing yet.
func NewUpstream(doer outbound.Doer, ep Endpoint) *Upstream {
	return &Upstream{doer: doer, ep: ep}
}

// Close ends the session, if one is open.
func (u *Upstream) Close() {
	u.mu.Lock()
	s := u.session
	u.session = nil
	u.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// Call runs the server's tool serverName with args within ctx's deadline.
// An error is a call that got no tool result (unreachable, refused answer,
// a JSON-RPC error); a tool that failed is a result with IsError.
func (u *Upstream) Call(ctx context.Context, serverName string, args map[string]any) (exthost.ToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	params := &mcp.CallToolParams{Name: serverName, Arguments: args}
	for attempt := 0; ; attempt++ {
		s, err := u.sessionFor(ctx)
		if err != nil {
			return exthost.ToolResult{}, fmt.Errorf("connect to %s: %w", u.ep.URL, deadlineSays(ctx, err))
		}
		res, err := s.CallTool(ctx, params)
		if err == nil {
			return toolResult(res), nil
		}
		u.drop(s)
		if attempt == 0 && errors.Is(err, mcp.ErrSessionMissing) {
			continue
		}
		return exthost.ToolResult{}, fmt.Errorf("%s: %w", u.ep.URL, deadlineSays(ctx, err))
	}
}

func (u *Upstream) sessionFor(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.idle == nil {
		u.idle = time.AfterFunc(SessionIdleTimeout, u.Close)
	} else {
		u.idle.Reset(SessionIdleTimeout)
	}
	if u.session != nil {
		return u.session, nil
	}
	s, err := connect(ctx, u.doer, u.ep)
	if err != nil {
		return nil, err
	}
	u.session = s
	return s, nil
}

// drop forgets s if it is still the current session, and closes it.
func (u *Upstream) drop(s *mcp.ClientSession) {
	u.mu.Lock()
	if u.session == s {
		u.session = nil
	}
	u.mu.Unlock()
	go func() { _ = s.Close() }()
}

// toolResult is an MCP result in the agent's wire shape: every content
// block kept (text, image, audio, resource links, embedded resources), and
// structuredContent in Details.
func toolResult(res *mcp.CallToolResult) exthost.ToolResult {
	out := exthost.ToolResult{IsError: res.IsError, Content: make([]exthost.Content, 0, len(res.Content))}
	for _, c := range res.Content {
		out.Content = append(out.Content, content(c))
	}
	if res.StructuredContent != nil {
		out.Details = map[string]any{StructuredContentKey: res.StructuredContent}
	}
	return out
}

func content(c mcp.Content) exthost.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return exthost.Content{Type: "text", Text: c.Text}
	case *mcp.ImageContent:
		return exthost.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType}
	case *mcp.AudioContent:
		return exthost.Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType}
	case *mcp.ResourceLink:
		return exthost.Content{Type: "resource_link", URI: c.URI, Text: c.Name, MimeType: c.MIMEType}
	case *mcp.EmbeddedResource:
		out := exthost.Content{Type: "resource"}
		if r := c.Resource; r != nil {
			out.URI, out.MimeType, out.Text = r.URI, r.MIMEType, r.Text
			if r.Blob != nil {
				out.Data = base64.StdEncoding.EncodeToString(r.Blob)
			}
		}
		return out
	}
	// A kind this SDK knows but a tool result does not carry: kept as
	// its JSON, never dropped silently.
	b, _ := json.Marshal(c)
	return exthost.Content{Type: "text", Text: string(b)}
}

// HeaderSource gives the headers of the MCP server of an extension
// ("namespace/name") for a request to endpoint: hostd's is the manager's
// endpoint (mcpheaders.Fetcher).
type HeaderSource interface {
	Headers(ctx context.Context, extension, endpoint string) (http.Header, error)
}

// Upstreams shares one Upstream per MCP server among the tools of a
// context: one session per server, however many of its tools are allowed.
type Upstreams struct {
	doer    outbound.Doer
	headers HeaderSource
	byEP    map[string]*Upstream
}

// NewUpstreams returns an empty set calling through doer; headers (nil:
// none) gives the headers of servers whose tools name headersFrom.
func NewUpstreams(doer outbound.Doer, headers HeaderSource) *Upstreams {
	return &Upstreams{doer: doer, headers: headers, byEP: map[string]*Upstream{}}
}

// Core is the exthost.CoreFunc of a registry tool whose calls go to an MCP
// server: the tool's deadline (bounded by exthost.MaxToolTimeout), the
// server's shared session, and the result paired with the call. A call that
// got no result is an error naming the server and why, so the call is
// blocked with that reason (fail closed).
func (us *Upstreams) Core(tool contract.Tool) (exthost.CoreFunc, error) {
	m := tool.MCP
	if m == nil || m.URL == "" || m.Tool == "" {
		return nil, fmt.Errorf("tool %q has no MCP server", tool.Name)
	}
	timeout := time.Duration(m.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = exthost.DefaultToolTimeout
	}
	timeout = min(timeout, exthost.MaxToolTimeout)
	ep := Endpoint{URL: m.URL, CABundle: m.CABundle, Timeout: timeout, Anonymous: m.External}
	if m.HeadersFrom != "" {
		ep.Headers = us.headersOf(m.HeadersFrom, m.URL)
	}
	key := fmt.Sprintf("%s\x00%x\x00%s\x00%t\x00%s", ep.URL, ep.CABundle, ep.Timeout, ep.Anonymous, m.HeadersFrom)
	up := us.byEP[key]
	if up == nil {
		up = NewUpstream(us.doer, ep)
		us.byEP[key] = up
	}
	return func(ctx context.Context, call exthost.ToolCall) (exthost.ToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := up.Call(ctx, m.Tool, call.Arguments)
		if err != nil {
			return exthost.ToolResult{}, fmt.Errorf("tool %q: its MCP server %w", tool.Name, err)
		}
		res.ToolCallID, res.ToolName = call.ID, call.Name
		return res, nil
	}, nil
}

// headersOf is the Endpoint.Headers of a server whose headers come from
// extension's Secret. Without a source every request fails: the server
// needs a credential hostd cannot get, and a call without it must not be
// sent (fail closed).
func (us *Upstreams) headersOf(extension, endpoint string) func(context.Context) (http.Header, error) {
	return func(ctx context.Context) (http.Header, error) {
		if us.headers == nil {
			return nil, fmt.Errorf("its headers come from a Secret of Extension %s, and this hostd has no MCP headers endpoint (--mcp-headers-url)", extension)
		}
		return us.headers.Headers(ctx, extension, endpoint)
	}
}
