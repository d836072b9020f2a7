package hostd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/keptresult"
)

const (
	// TruncatedDetailsKey is the detail of a truncated answer: the bytes the
	// agent got and the tool answered, and where the whole answer is.
	TruncatedDetailsKey = "loadout.dev/truncated"
	// keptResultURIPrefix names a kept answer as an MCP resource.
	keptResultURIPrefix = "loadout://results/"
)

// resultSize is what an answer costs the agent: the bytes of its content
// blocks (text, data, URIs) and of its details as JSON.
func resultSize(r exthost.ToolResult) int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Data) + len(c.URI)
	}
	if len(r.Details) > 0 {
		if b, err := json.Marshal(r.Details); err == nil {
			n += len(b)
		}
	}
	return n
}

// resultOwnerKey carries, in an MCP call's context, who may read its kept
// answer: the MCP session (a resource read carries no call id).
type resultOwnerKey struct{}

// resultOwner is who may read call's kept answer: the MCP session that
// made it, or else the session the agent sent and the call's id.
func resultOwner(ctx context.Context, call exthost.ToolCall) keptresult.Owner {
	if o, ok := ctx.Value(resultOwnerKey{}).(keptresult.Owner); ok {
		return o
	}
	return keptresult.Owner{Session: exthost.RuntimeOf(ctx).Session.ID, Call: call.ID}
}

// mcpResultOwner is the owner of the kept answers of an MCP session's calls.
func mcpResultOwner(sessionID string) keptresult.Owner {
	return keptresult.Owner{Session: "mcp:" + sessionID}
}

// limitOutput applies a tool's output limit to its answer (rule R-TL-2),
// after the after hooks judged the whole of it (flagged: their findings and
// failures): within it, the answer as it is; over it, Refuse answers an
// error naming the limit, an answer an after hook flagged is withheld whole
// (neither its cut part nor the whole is handed out: the hook judged more
// than the agent would get), and Truncate keeps the content blocks that fit
// (the first text block that does not is cut at a character boundary),
// drops the details, and adds a marker block saying how much the agent got
// and where the whole answer is kept, for owner only.
func (s *Server) limitOutput(tool contract.Tool, r exthost.ToolResult, flagged []exthost.Diagnostic, owner keptresult.Owner) exthost.ToolResult {
	limit := tool.Output
	if limit == nil {
		return r
	}
	size := resultSize(r)
	if size <= limit.MaxBytes {
		return r
	}
	s.metrics.toolOutputs.WithLabelValues(limit.OnOverflow).Inc()
	if len(flagged) > 0 {
		f := flagged[0]
		return exthost.ToolResult{ToolCallID: r.ToolCallID, ToolName: r.ToolName, IsError: true, Content: []exthost.Content{{Type: "text",
			Text: fmt.Sprintf("tool %q answered %d bytes, over its output limit of %d bytes, and hook %s/%s flagged the whole answer (%s: %s): the answer is withheld whole and not kept",
				tool.Name, size, limit.MaxBytes, f.ExtensionID, f.Hook, f.Kind, f.Message)}}}
	}
	if limit.OnOverflow == contract.OverflowRefuse {
		return exthost.ToolResult{ToolCallID: r.ToolCallID, ToolName: r.ToolName, IsError: true, Content: []exthost.Content{{Type: "text",
			Text: fmt.Sprintf("tool %q answered %d bytes, over its output limit of %d bytes (output.onOverflow: Refuse): the answer was dropped", tool.Name, size, limit.MaxBytes)}}}
	}
	out := exthost.ToolResult{ToolCallID: r.ToolCallID, ToolName: r.ToolName, IsError: r.IsError}
	kept := 0
	for _, c := range r.Content {
		n := len(c.Text) + len(c.Data) + len(c.URI)
		if kept+n <= limit.MaxBytes {
			out.Content = append(out.Content, c)
			kept += n
			continue
		}
		if c.Type == "text" && c.Data == "" && c.URI == "" {
			c.Text = cutAtRune(c.Text, limit.MaxBytes-kept)
			kept += len(c.Text)
			if c.Text != "" {
				out.Content = append(out.Content, c)
			}
		}
		break
	}
	where := "it was too large to keep"
	details := map[string]any{"keptBytes": kept, "totalBytes": size}
	if body, err := json.Marshal(r); err == nil {
		if id := s.kept.Keep(owner, body); id != "" {
			where = fmt.Sprintf("the whole answer is kept for %s, for this session and call only, at GET /v1/results/%s?session=<session id>&call=%s on hostd (MCP resource %s%s, this MCP session only)",
				keptresult.TTL, id, url.QueryEscape(r.ToolCallID), keptResultURIPrefix, id)
			details["result"] = "/v1/results/" + id
			details["resource"] = keptResultURIPrefix + id
		}
	}
	out.Content = append(out.Content, exthost.Content{Type: "text",
		Text: fmt.Sprintf("[output truncated by Loadout: %d of %d bytes shown (the limit of tool %q); %s]", kept, size, tool.Name, where)})
	out.Details = map[string]any{TruncatedDetailsKey: details}
	return out
}

// cutAtRune is s cut to at most n bytes without splitting a character.
func cutAtRune(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// handleKeptResult serves a truncated call's whole answer while it is
// kept, to the session and call that produced it (?session=&call=).
func (s *Server) handleKeptResult(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	body, err := s.kept.Get(r.PathValue("id"), keptresult.Owner{Session: q.Get("session"), Call: q.Get("call")})
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no kept result %q for this session and call: results of truncated calls are kept for %s, at most %d of them, each for the session and call that produced it (?session=&call=)",
			r.PathValue("id"), keptresult.TTL, keptresult.MaxEntries))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// mcpReadKeptResult serves a kept answer as the MCP resource the
// truncation marker names, to the MCP session whose call produced it.
func (s *Server) mcpReadKeptResult(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if !strings.HasPrefix(uri, keptResultURIPrefix) || req.Session == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	body, err := s.kept.Get(strings.TrimPrefix(uri, keptResultURIPrefix), mcpResultOwner(req.Session.ID()))
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
}
