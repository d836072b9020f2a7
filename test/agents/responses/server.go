// Package responses is a scripted OpenAI Responses API server for the agent
// tests: an agent CLI (Codex) configured with a custom model provider whose
// base_url points here gets its model turns from a script instead of a model,
// and every request body is recorded for the test to read.
package responses

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is one recorded model request (POST /v1/responses).
type Request struct {
	// Body is the request body as sent.
	Body []byte
	// Instructions is the body's top-level instructions (the base prompt).
	Instructions string `json:"instructions"`
	// Input is the conversation so far, each item as sent.
	Input []json.RawMessage `json:"input"`
	// Tools are the tools offered to the model.
	Tools []json.RawMessage `json:"tools"`
}

// Text is everything the model would read in this request: instructions,
// every input item and the tool definitions, as JSON text. Tests assert that
// something reached the model by searching it.
func (r Request) Text() string { return string(r.Body) }

// ToolNames lists the names of the offered tools (function tools by name,
// other tool types by type). A namespace's tools are listed as
// namespace.name.
func (r Request) ToolNames() []string {
	var names []string
	for _, raw := range r.Tools {
		var t struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(raw, &t)
		switch {
		case t.Type == "namespace":
			for _, sub := range t.Tools {
				names = append(names, t.Name+"."+sub.Name)
			}
		case t.Name != "":
			names = append(names, t.Name)
		default:
			names = append(names, t.Type)
		}
	}
	return names
}

// Output is the output of a function call the agent sent back: the
// function_call_output item whose call_id is callID, as text.
func (r Request) Output(callID string) (string, bool) {
	for _, raw := range r.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil || it.CallID != callID || !strings.HasSuffix(it.Type, "_call_output") {
			continue
		}
		var s string
		if json.Unmarshal(it.Output, &s) == nil {
			return s, true
		}
		return string(it.Output), true
	}
	return "", false
}

// Turn answers one model request with output items (see Message and
// FunctionCall). It may inspect the request, e.g. for the tools offered.
type Turn func(Request) []any

// Server replays a script of turns, one per model request, and records the
// requests. A request past the end of the script is answered with a final
// message, so a confused agent ends its run instead of hanging.
type Server struct {
	URL string

	mu       sync.Mutex
	script   []Turn
	requests []Request
	srv      *httptest.Server
}

// Start serves script on a loopback port until the test ends.
func Start(t testing.TB, script ...Turn) *Server {
	t.Helper()
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/v1"
	return s
}

// CodexConfig is the config.toml a user writes to run codex against s: the
// scripted model provider, without retries (a test's script answers once).
func (s *Server) CodexConfig() string {
	return fmt.Sprintf(`model = "scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, s.URL)
}

// CodexUserHookOverride is what a user adds to config.toml to try to remove
// the managed PreToolUse hook (disabling it by its state key) and run a hook
// of its own, which touches ran.
func CodexUserHookOverride(ran string) string {
	return fmt.Sprintf(`
[hooks.state."/etc/codex/requirements.toml:pre_tool_use:0:0"]
enabled = false

[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = "touch %s"
`, ran)
}

// Requests returns the model requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Body: body}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var turn Turn
	if n < len(s.script) {
		turn = s.script[n]
	}
	s.mu.Unlock()
	items := []any{Message("The scripted model has nothing more to say.")}
	if turn != nil {
		items = turn(req)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	id := fmt.Sprintf("resp_%d", n+1)
	event(w, "response.created", map[string]any{"response": map[string]any{"id": id}})
	for i, item := range items {
		event(w, "response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event(w, "response.completed", map[string]any{"response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func event(w io.Writer, typ string, fields map[string]any) {
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
}

// Message is an assistant message output item.
func Message(text string) any {
	return map[string]any{"type": "message", "role": "assistant", "id": "msg_" + fmt.Sprint(len(text)),
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// FunctionCall is a function call output item: the model calls the tool name
// with args (marshalled to the JSON string the API sends) under callID. A
// name as ToolNames lists it, namespace.name, calls a namespace's tool.
func FunctionCall(callID, name string, args any) any {
	b, _ := json.Marshal(args)
	item := map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": name, "arguments": string(b)}
	if ns, fn, ok := strings.Cut(name, "."); ok {
		item["namespace"], item["name"] = ns, fn
	}
	return item
}

// Shell is a turn that calls codex's exec_command tool with cmd as call id.
func Shell(id, cmd string) Turn {
	return func(Request) []any {
		return []any{FunctionCall(id, "exec_command", map[string]any{"cmd": cmd})}
	}
}

// Say is a turn that answers text.
func Say(text string) Turn {
	return func(Request) []any { return []any{Message(text)} }
}

// MustHaveGot fails t unless the agent sent back the output of call id
// holding want; detail (the agent's output, logs) is shown when it never
// sent that output back.
func (s *Server) MustHaveGot(t testing.TB, id, want, detail string) {
	t.Helper()
	for _, r := range s.Requests() {
		if got, ok := r.Output(id); ok {
			if !strings.Contains(got, want) {
				t.Errorf("the model got %q for call %s, want %q", got, id, want)
			}
			return
		}
	}
	t.Errorf("the model never got the output of call %s\n%s", id, detail)
}
