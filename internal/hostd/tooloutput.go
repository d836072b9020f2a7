package hostd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// Bounds of the answers hostd keeps for truncated calls: a truncated
// answer's whole is served at GET /v1/results/{id} (and as the MCP resource
// loadout://results/{id}) for keptResultTTL, the oldest dropped first when
// more than keptResultsMaxBytes or keptResultsMax are kept.
const (
	keptResultTTL       = 10 * time.Minute
	keptResultsMaxBytes = 8 << 20
	keptResultsMax      = 32
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

// keptResult is a whole answer hostd keeps for a while.
type keptResult struct {
	id      string
	tool    string
	body    []byte // the ToolResult as JSON
	expires time.Time
}

// keptResults holds the whole answers of truncated calls, bounded in count,
// bytes and time.
type keptResults struct {
	mu    sync.Mutex
	now   func() time.Time
	order []*keptResult // oldest first
	bytes int
}

func newKeptResults(now func() time.Time) *keptResults { return &keptResults{now: now} }

// keep stores r and returns its id, or "" when it cannot be kept (larger
// than the whole store).
func (k *keptResults) keep(r exthost.ToolResult) string {
	body, err := json.Marshal(r)
	if err != nil || len(body) > keptResultsMaxBytes {
		return ""
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	e := &keptResult{id: hex.EncodeToString(b[:]), tool: r.ToolName, body: body, expires: k.now().Add(keptResultTTL)}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expire()
	for len(k.order) > 0 && (len(k.order) >= keptResultsMax || k.bytes+len(body) > keptResultsMaxBytes) {
		k.bytes -= len(k.order[0].body)
		k.order = k.order[1:]
	}
	k.order = append(k.order, e)
	k.bytes += len(body)
	return e.id
}

// get returns the kept answer id names, while it is kept.
func (k *keptResults) get(id string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expire()
	for _, e := range k.order {
		if e.id == id {
			return e.body, true
		}
	}
	return nil, false
}

// expire drops the answers past their time. The caller holds mu.
func (k *keptResults) expire() {
	now := k.now()
	i := 0
	for i < len(k.order) && !now.Before(k.order[i].expires) {
		k.bytes -= len(k.order[i].body)
		i++
	}
	k.order = k.order[i:]
}

// limitOutput applies a tool's output limit to its answer (rule R-TL-2):
// within it, the answer as it is; over it, Refuse answers an error naming
// the limit and Truncate keeps the content blocks that fit (the first text
// block that does not is cut at a character boundary), drops the details,
// and adds a marker block saying how much the agent got and where the whole
// answer is kept.
func (s *Server) limitOutput(tool contract.Tool, r exthost.ToolResult) exthost.ToolResult {
	limit := tool.Output
	if limit == nil {
		return r
	}
	size := resultSize(r)
	if size <= limit.MaxBytes {
		return r
	}
	s.metrics.toolOutputs.WithLabelValues(limit.OnOverflow).Inc()
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
	if id := s.kept.keep(r); id != "" {
		where = fmt.Sprintf("the whole answer is kept for %s at GET /v1/results/%s on hostd (MCP resource %s%s)", keptResultTTL, id, keptResultURIPrefix, id)
		details["result"] = "/v1/results/" + id
		details["resource"] = keptResultURIPrefix + id
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

// handleKeptResult serves a truncated call's whole answer while it is kept.
func (s *Server) handleKeptResult(w http.ResponseWriter, r *http.Request) {
	body, ok := s.kept.get(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("no kept result %q: results of truncated calls are kept for %s, at most %d of them", r.PathValue("id"), keptResultTTL, keptResultsMax))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// mcpReadKeptResult serves a kept answer as the MCP resource the
// truncation marker names.
func (s *Server) mcpReadKeptResult(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	body, ok := s.kept.get(strings.TrimPrefix(uri, keptResultURIPrefix))
	if !ok || !strings.HasPrefix(uri, keptResultURIPrefix) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
}
