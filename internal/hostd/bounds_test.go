package hostd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/jsonlimit"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// emptyObjectsAnswer is a tool answer of n bytes at most whose details hold
// as many {} values as fit: ~350k in 1 MiB, ~100 MB once decoded.
func emptyObjectsAnswer(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"content":[{"type":"text","text":"ok"}],"details":{"l":[{}`)
	for buf.Len()+3+3 <= n {
		buf.WriteString(`,{}`)
	}
	buf.WriteString(`]}}`)
	return buf.Bytes()
}

// newLimitedServer serves reg with limits.
func newLimitedServer(t testing.TB, reg contract.Registry, limits Limits) *httptest.Server {
	t.Helper()
	_, ts, _ := serveContext(t, contextData(t, reg), Options{Limits: limits})
	return ts
}

// A tool Service answering 1 MiB of {} values (within the byte limit) is
// refused before its answer is decoded, by /v1/tools and MCP tools/call
// alike, with a reason naming the tool and the limit.
func TestBounds_ToolAnswerOverTheValueLimitRefusedNamingToolAndLimit(t *testing.T) {
	answer := emptyObjectsAnswer(1 << 20)
	if n := jsonlimit.CountValues(answer); n <= MaxJSONValues {
		t.Fatalf("test answer holds %d values, want more than %d", n, MaxJSONValues)
	}
	svc := newToolService(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(answer) })
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	want := []string{`tool "review_note"`, "JSON values and keys", fmt.Sprintf("over the limit of %d", MaxJSONValues)}
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "big", "arguments": map[string]any{"text": "hi"}})
	if code != 200 || !resp.Executed || !resp.Result.IsError || len(resp.Result.Content) != 1 || resp.Result.Details != nil {
		t.Fatalf("/v1/tools: %d %+v, want an error result without the answer's details", code, resp)
	}
	for _, w := range want {
		if !strings.Contains(resp.Result.Content[0].Text, w) {
			t.Fatalf("/v1/tools reason %q does not say %q", resp.Result.Content[0].Text, w)
		}
	}
	res, text := callMCP(t, connectMCP(t, ts.URL, nil), "review_note", map[string]any{"text": "hi"})
	for _, w := range want {
		if !res.IsError || !strings.Contains(text, w) {
			t.Fatalf("MCP tools/call: isError=%v %q, want it to say %q", res.IsError, text, w)
		}
	}
	if svc.calls.Load() != 2 {
		t.Fatalf("service called %d times, want 2", svc.calls.Load())
	}
}

// An answer over the byte limit is refused naming the tool and the limit.
func TestBounds_ToolAnswerOverTheByteLimitRefusedNamingToolAndLimit(t *testing.T) {
	answer := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", MaxBodyBytes) + `"}]}`)
	svc := newToolService(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(answer) })
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "big", "arguments": map[string]any{"text": "hi"}})
	if !resp.Result.IsError || !strings.Contains(resp.Result.Content[0].Text, `tool "review_note"`) ||
		!strings.Contains(resp.Result.Content[0].Text, fmt.Sprint(MaxBodyBytes)) {
		t.Fatalf("%+v, want an error naming the tool and the %d-byte limit", resp.Result, MaxBodyBytes)
	}
}

// The answer of a tool's Service is decoded inside the decode budget of the
// request it answers: the outbound call gets the request's grant, through
// /v1/tools and MCP tools/call alike (an MCP call's context is the SDK's).
func TestBounds_ToolAnswerDrawsFromTheRequestsDecodeBudget(t *testing.T) {
	granted := make(chan bool, 2)
	reg := runnableRegistry("http://review-notes.team-a.svc:8080/notes", 5)
	_, ts, _ := serveContext(t, contextData(t, reg), Options{Outbound: outbound.DoerFunc(func(ctx context.Context, _ outbound.Request) (*outbound.Response, error) {
		granted <- jsonlimit.GrantFrom(ctx) != nil
		return &outbound.Response{StatusCode: 200, Body: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}, nil
	})})
	if _, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "g", "arguments": map[string]any{"text": "hi"}}); resp.Result.IsError {
		t.Fatalf("/v1/tools: %+v", resp.Result)
	}
	if !<-granted {
		t.Fatal("/v1/tools: the Service's answer is decoded outside the request's decode budget")
	}
	if res, text := callMCP(t, connectMCP(t, ts.URL, nil), "review_note", map[string]any{"text": "hi"}); res.IsError {
		t.Fatalf("MCP: %s", text)
	}
	if !<-granted {
		t.Fatal("MCP tools/call: the Service's answer is decoded outside the request's decode budget")
	}
}

// A webhook hook answering more values than a verdict needs fails the
// before call closed, the reason naming the limit.
func TestBounds_WebhookAnswerOverTheValueLimitFailsClosed(t *testing.T) {
	svc := testnet.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"allowed":true,"extra":[`+strings.Repeat(`{},`, 10_000)+`{}]}`)
	})
	reg := contract.Registry{
		Tools: []contract.Tool{{Name: "run", Description: "Runs.", Extension: "policy"}},
		Hooks: []contract.Hook{{Extension: "policy", Name: "remote", Event: contract.EventBeforeToolCall, TimeoutSeconds: 5,
			Webhook: &contract.WebhookHook{URL: svc.URL + "/check"}}},
		Extensions: []string{"policy"},
	}
	_, ts, _ := newTestServer(t, reg)
	var out BeforeResponse
	if code := post(t, ts.URL+"/v1/before", `{"call":{"id":"c1","name":"run","arguments":{}}}`, &out); code != 200 {
		t.Fatalf("status %d", code)
	}
	raw, _ := json.Marshal(out)
	if out.Allowed || !strings.Contains(string(raw), "JSON values and keys, over the limit of 4096") {
		t.Fatalf("before: %s, want blocked with the value limit named", raw)
	}
}

// mcpPost sends one raw MCP POST and returns the status, the session id
// header and the body.
func mcpPost(t *testing.T, base, session, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(out)
}

// waitSessionRoom polls MCP initialize, for at most 30 seconds, until the
// session cap admits a new session; it fails with failure and the last
// answer when none is admitted.
func waitSessionRoom(t *testing.T, base, failure string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, _, body := mcpPost(t, base, "", mcpInitialize)
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d %s", failure, code, body)
		}
	}
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// A JSON-RPC batch of 200 tools/call, on a protocol version that still had
// batches, is refused whole: none reaches the Service, so one POST cannot
// put 200 calls in flight from one request slot.
func TestBounds_MCPBatchRefused(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	code, session, body := mcpPost(t, ts.URL, "", mcpInitialize)
	if code != 200 || session == "" {
		t.Fatalf("initialize: %d %q %s", code, session, body)
	}
	if code, _, body := mcpPost(t, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", code, body)
	}
	calls := make([]string, 200)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"review_note","arguments":{"text":"hi"}}}`, i+2)
	}
	code, _, body = mcpPost(t, ts.URL, session, " \n["+strings.Join(calls, ",")+"]")
	if code != http.StatusBadRequest || !strings.Contains(body, "batches are not accepted") {
		t.Fatalf("batch: %d %s, want 400 saying batches are not accepted", code, body)
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("a refused batch reached the Service %d times", n)
	}
	// One call per POST still works on the same session.
	code, _, body = mcpPost(t, ts.URL, session, calls[0])
	if code != 200 || !strings.Contains(body, "note recorded") || svc.calls.Load() != 1 {
		t.Fatalf("single call: %d %s (service calls %d)", code, body, svc.calls.Load())
	}
}

// At --mcp-max-sessions open sessions a new one is refused with a reason;
// ending one (DELETE) makes room.
func TestBounds_MCPSessionCap(t *testing.T) {
	ts := newLimitedServer(t, fixedRegistry(), Limits{MCPMaxSessions: 2})
	var sessions []string
	for range 2 {
		code, id, body := mcpPost(t, ts.URL, "", mcpInitialize)
		if code != 200 || id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		sessions = append(sessions, id)
	}
	code, id, body := mcpPost(t, ts.URL, "", mcpInitialize)
	if code != http.StatusServiceUnavailable || id != "" || !strings.Contains(body, "2 MCP sessions open") || !strings.Contains(body, "--mcp-max-sessions=2") {
		t.Fatalf("third session: %d %q %s, want 503 naming the limit", code, id, body)
	}
	// The SDK's own client is refused too.
	client := mcp.NewClient(&mcp.Implementation{Name: "loadout-test", Version: "v0"}, nil)
	if _, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + MCPPath}, nil); err == nil {
		t.Fatal("an MCP client opened a session over the cap")
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+MCPPath, nil)
	req.Header.Set("Mcp-Session-Id", sessions[0])
	if code, _ := testnet.Do(t, nil, req); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	// The SDK forgets an ended session just after DELETE answers.
	waitSessionRoom(t, ts.URL, "no room after a session ended")
}

// A session that receives no request for --mcp-session-idle-timeout is
// closed, and its room goes to a new one.
func TestBounds_MCPIdleSessionsExpire(t *testing.T) {
	ts := newLimitedServer(t, fixedRegistry(), Limits{MCPMaxSessions: 1, MCPSessionIdleTimeout: 50 * time.Millisecond})
	code, first, body := mcpPost(t, ts.URL, "", mcpInitialize)
	if code != 200 || first == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	// Once the idle session is gone the cap admits a new one.
	waitSessionRoom(t, ts.URL, "the idle session never closed")
	if code, _, _ := mcpPost(t, ts.URL, first, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Fatalf("the expired session still answers: %d", code)
	}
}

// Request bodies held at once are bounded by bytes, not only by slots:
// with two ~1 MiB bodies read and not yet decoded, a third ~1 MiB body is
// told to retry, while a small one is still read.
func TestBounds_BodiesHeldAtOnceAreBoundedByBytes(t *testing.T) {
	entered, release := make(chan struct{}, 4), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	l := newLimiter(Limits{QueueWait: 200 * time.Millisecond}.withDefaults())
	ts := httptest.NewServer(l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 1000 { // a big body waits, undecoded
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusOK)
	})))
	t.Cleanup(ts.Close)
	t.Cleanup(free) // before the server closes, even when the test fails
	big := strings.Repeat("x", MaxBodyBytes-10)
	done := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Post(ts.URL, "application/json", strings.NewReader(big))
			if err != nil {
				done <- 0
				return
			}
			_ = resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range 2 {
		<-entered
	}
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third ~1 MiB body while two are held: %d, want 503", resp.StatusCode)
	}
	if resp, err = http.Post(ts.URL, "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a small body while two big ones are held: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	free()
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Fatalf("a held body ended %d", code)
		}
	}
}

// A decoded body no longer counts against the bodies held at once: with
// four ~1 MiB tool calls decoded and waiting on their Service, a fifth ~1
// MiB call is served (before, it was told to retry while the four held their
// bodies until they answered), and a small call still runs.
func TestBounds_DecodedBodiesReturnTheirShare(t *testing.T) {
	entered, release := make(chan struct{}, 8), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	svc := newToolService(t, func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		recordNote(w, nil)
	})
	reg := fixedRegistry()
	reg.Tools[1].Service = &contract.ToolService{URL: svc.URL, TimeoutSeconds: 60}
	ts := newLimitedServer(t, reg, Limits{QueueWait: 200 * time.Millisecond})
	t.Cleanup(free) // before the servers close, even when the test fails
	big := func(id string) string {
		return `{"call":{"id":"` + id + `","name":"review_note","arguments":{"pad":"` + strings.Repeat("x", 1_000_000) + `"}}}`
	}
	done := make(chan int, 4)
	for i := range 4 {
		go func() {
			// On a loaded machine a big call can wait longer than QueueWait
			// for the decode budget and be told to retry: it does, so that
			// four bodies end up held.
			for deadline := time.Now().Add(time.Minute); ; {
				resp, err := http.Post(ts.URL+"/v1/tools/review_note", "application/json", strings.NewReader(big(fmt.Sprint(i))))
				if err != nil {
					done <- 0
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				done <- resp.StatusCode
				return
			}
		}()
	}
	timeout := time.After(2 * time.Minute)
	for range 4 {
		select {
		case <-entered:
		case code := <-done:
			t.Fatalf("a big call ended %d before its Service held it", code)
		case <-timeout:
			t.Fatal("four big calls never reached their Service")
		}
	}
	var fifth BeforeResponse
	if code := post(t, ts.URL+"/v1/before", big("5"), &fifth); code != http.StatusOK || !fifth.Allowed {
		t.Fatalf("a fifth ~1 MiB body while four decoded calls wait: %d %+v, want it served", code, fifth)
	}
	var out BeforeResponse
	if code := post(t, ts.URL+"/v1/before", `{"call":{"id":"s","name":"review_note","arguments":{"text":"ok"}}}`, &out); code != 200 || !out.Allowed {
		t.Fatalf("a small call while four big bodies are held: %d %+v", code, out)
	}
	free()
	for range 4 {
		if code := <-done; code != 200 {
			t.Fatalf("a held call ended %d", code)
		}
	}
}
