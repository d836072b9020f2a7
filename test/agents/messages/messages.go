// Package messages is a scripted Anthropic Messages API for tests that run
// the real Claude Code outside test/agents/claudecode (whose own copy is
// model_test.go): it answers the agent loop with a script of turns and
// records every request.
package messages

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Turn is one scripted assistant message: text, then tool calls. A turn
// with tool calls ends with stop_reason tool_use, so Claude Code runs them
// and asks again with their results.
type Turn struct {
	Text  string
	Tools []ToolUse
}

// ToolUse is one tool_use block of a turn.
type ToolUse struct {
	ID    string
	Name  string
	Input map[string]any
}

// Model is a scripted Anthropic Messages API: it records every request and
// answers the agent loop's requests (those that offer tools) with the next
// turn of its script, streamed as Server-Sent Events the way the API
// streams. Other requests (titles, summaries) get a short text answer, so
// they never consume the script. When the script is used up it answers
// "done" with end_turn, which ends claude -p.
type Model struct {
	*httptest.Server
	mu       sync.Mutex
	script   []Turn
	requests []Request
}

// Request is one recorded Messages API request.
type Request struct {
	Raw      string
	System   string
	Messages []Message
	Tools    []string
}

// Message is one message of a request, its content blocks kept raw.
type Message struct {
	Role    string
	Content []map[string]any
}

// NewModel serves script until the test ends.
func NewModel(t testing.TB, script ...Turn) *Model {
	t.Helper()
	m := &Model{script: script}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// Play replaces the turns still to play, for a script that needs the
// session's paths.
func (m *Model) Play(script ...Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = script
}

// Requests are every recorded request, in order.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// AgentRequests are the recorded requests that offered tools: the agent
// loop's, in order.
func (m *Model) AgentRequests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for _, r := range m.requests {
		if len(r.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// FirstAgentRequest is the agent loop's first request; t fails when the
// agent sent the model none.
func (m *Model) FirstAgentRequest(t testing.TB) Request {
	t.Helper()
	reqs := m.AgentRequests()
	if len(reqs) == 0 {
		t.Fatal("Claude Code sent the model no request")
	}
	return reqs[0]
}

// MustReach reports each wanted text (what it is → the text) that the
// request does not hold.
func (r Request) MustReach(t testing.TB, wants map[string]string) {
	t.Helper()
	for what, want := range wants {
		if !strings.Contains(r.Raw, want) {
			t.Errorf("%s (%q) did not reach the model", what, want)
		}
	}
}

// ToolResults are the tool_result blocks the agent sent back, by tool_use id,
// each as its text.
func (m *Model) ToolResults() map[string]ToolResult {
	out := map[string]ToolResult{}
	for _, r := range m.AgentRequests() {
		for _, msg := range r.Messages {
			for _, b := range msg.Content {
				if b["type"] != "tool_result" {
					continue
				}
				id, _ := b["tool_use_id"].(string)
				isErr, _ := b["is_error"].(bool)
				out[id] = ToolResult{Text: blockText(b["content"]), IsError: isErr}
			}
		}
	}
	return out
}

// ToolResult is what the model got back for one tool call.
type ToolResult struct {
	Text    string
	IsError bool
}

func blockText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, item := range c {
			if b, ok := item.(map[string]any); ok {
				if s, ok := b["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		// count_tokens and anything else: a harmless answer.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":1}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Raw: string(raw), System: systemText(body.System)}
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, msg := range body.Messages {
		var blocks []map[string]any
		if json.Unmarshal(msg.Content, &blocks) != nil {
			var s string
			_ = json.Unmarshal(msg.Content, &s)
			blocks = []map[string]any{{"type": "text", "text": s}}
		}
		req.Messages = append(req.Messages, Message{Role: msg.Role, Content: blocks})
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	turn := Turn{Text: "done"}
	if len(req.Tools) > 0 && len(m.script) > 0 {
		turn, m.script = m.script[0], m.script[1:]
	}
	m.mu.Unlock()
	if body.Stream {
		streamTurn(w, turn)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(message(turn, true))
}

func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func stopReason(turn Turn) string {
	if len(turn.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// message is the turn as a complete Messages API message; withContent false
// is message_start's empty shell.
func message(turn Turn, withContent bool) map[string]any {
	msg := map[string]any{"id": "msg_scripted", "type": "message", "role": "assistant", "model": "claude-scripted",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}
	if withContent {
		var content []any
		if turn.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": turn.Text})
		}
		for _, tu := range turn.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": tu.Input})
		}
		msg["content"] = content
		msg["stop_reason"] = stopReason(turn)
	}
	return msg
}

// streamTurn writes the turn as the API's event stream: message_start, one
// start/delta/stop per content block, message_delta with the stop reason,
// message_stop.
func streamTurn(w http.ResponseWriter, turn Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"message": message(turn, false)})
	index := 0
	if turn.Text != "" {
		event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": turn.Text}})
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	for _, tu := range turn.Tools {
		input, _ := json.Marshal(tu.Input)
		event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		event("content_block_stop", map[string]any{"index": index})
		index++
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stopReason(turn), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	event("message_stop", map[string]any{})
}
