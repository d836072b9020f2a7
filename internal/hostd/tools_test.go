package hostd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// toolService is a real HTTP server standing in for a tool's Service: it
// records every invocation it receives and answers with handle.
type toolService struct {
	*httptest.Server
	calls atomic.Int32
	last  atomic.Pointer[exthost.ToolInvocation]
}

func newToolService(t testing.TB, handle http.HandlerFunc) *toolService {
	t.Helper()
	ts := &toolService{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.calls.Add(1)
		var inv exthost.ToolInvocation
		if err := json.NewDecoder(r.Body).Decode(&inv); err == nil {
			ts.last.Store(&inv)
		}
		handle(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// recordNote answers like the sample review-notes Service.
func recordNote(w http.ResponseWriter, _ *http.Request) {
	_ = json.NewEncoder(w).Encode(exthost.ToolAnswer{Content: []exthost.Content{{Type: "text", Text: "note recorded"}}})
}

// runnableRegistry is the fixed example (docs/rules.md)'s registry with review_note implemented by the
// Service at url, its schema requiring a string text.
func runnableRegistry(url string, timeoutSeconds int32) contract.Registry {
	reg := fixedRegistry()
	reg.Tools[1].InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":200}},"required":["text"],"additionalProperties":false}`)
	reg.Tools[1].Service = &contract.ToolService{URL: url, TimeoutSeconds: timeoutSeconds}
	return reg
}

func runTool(t *testing.T, base, name string, call map[string]any) (int, ToolRunResponse, ErrorResponse) {
	t.Helper()
	var raw json.RawMessage
	code := post(t, base+"/v1/tools/"+name, map[string]any{"call": call}, &raw)
	var resp ToolRunResponse
	var e ErrorResponse
	if code == http.StatusOK {
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
	} else if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return code, resp, e
}

func TestTools_AllowedCallRunsTheServiceOnceAndPairsTheResult(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL+"/notes", 5))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "looks good"}})
	if code != 200 || !resp.Executed || resp.Result.IsError || resp.Result.ToolCallID != "t-1" || resp.Result.ToolName != "review_note" ||
		len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != "note recorded" || len(resp.Diagnostics) != 0 {
		t.Fatalf("allowed call: %d %+v", code, resp)
	}
	if resp.Call.ID != "t-1" || resp.Call.Name != "review_note" || resp.Call.Arguments["text"] != "looks good" {
		t.Fatalf("answer not paired with its call: %+v", resp.Call)
	}
	inv := svc.last.Load()
	if svc.calls.Load() != 1 || inv == nil || inv.Kind != exthost.ToolInvocationKind || inv.Tool != "review_note" ||
		inv.Extension != "review-extension" || inv.Call.Arguments["text"] != "looks good" || inv.Workspace.Name != "ws" {
		t.Fatalf("service saw %d calls, last %+v", svc.calls.Load(), inv)
	}
}

func TestTools_SchemaInvalidArgumentsRejectedWithTheSchemaError(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": 42}, "at '/text': got number, want string"},
		{map[string]any{}, "at '/': missing property 'text'"},
		{nil, "at '/': missing property 'text'"},
		{map[string]any{"text": "ok", "extra": true}, "additional properties 'extra' not allowed"},
		{map[string]any{"text": strings.Repeat("a", 201)}, "at '/text': maxLength"},
	} {
		code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "bad", "arguments": tt.args})
		if code != 200 || resp.Executed || !resp.Result.IsError || resp.Result.ToolCallID != "bad" ||
			!strings.Contains(resp.Result.Content[0].Text, tt.want) || resp.Result.Details["invalidArguments"] == nil {
			t.Errorf("arguments %v: %d %+v, want a blocked result naming %q", tt.args, code, resp, tt.want)
		}
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("the service was called %d times for invalid arguments", n)
	}
}

func TestTools_DeniedCallNeverReachesTheService(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "s-1", "arguments": map[string]any{"text": "the SECRET is 42"}})
	if code != 200 || resp.Executed || !resp.Result.IsError || resp.Result.ToolCallID != "s-1" ||
		resp.Result.Content[0].Text != "notes must not contain secrets" || resp.Result.Details["hook"] != "no-secrets" {
		t.Fatalf("secret note: %d %+v", code, resp)
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("a denied call reached the service (%d calls)", n)
	}
}

// rule R-EXT-5: tools.deny refuses a runnable tool before schema, hooks and
// Service, like any other tool.
func TestTools_WorkspaceDenyRefusesARunnableTool_REXT5(t *testing.T) {
	svc := newToolService(t, recordNote)
	reg := runnableRegistry(svc.URL, 5)
	reg.Deny = append(reg.Deny, "review_note")
	reg.Tools = reg.Tools[:1] // the publisher leaves denied tools out
	_, ts, _ := newTestServer(t, reg)
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "d-1", "arguments": map[string]any{"text": "fine"}})
	if code != 200 || resp.Executed || resp.Result.Details["policy"] != "deny" || svc.calls.Load() != 0 {
		t.Fatalf("denied tool: %d %+v (service calls %d)", code, resp, svc.calls.Load())
	}
}

func TestTools_HangingServiceFailsTheCallAtItsDeadline(t *testing.T) {
	release := make(chan struct{})
	svc := newToolService(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 1))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "h-1", "arguments": map[string]any{"text": "hi"}})
	if code != 200 || !resp.Executed || !resp.Result.IsError || resp.Result.ToolCallID != "h-1" ||
		!strings.Contains(resp.Result.Content[0].Text, "did not answer within 1s") {
		t.Fatalf("hanging service: %d %+v", code, resp)
	}
	// The tool ran and failed, so the after hooks saw the failure.
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Kind != exthost.DiagnosticAudit || resp.Diagnostics[0].Message != "tool failed" {
		t.Fatalf("after hooks did not observe the failure: %+v", resp.Diagnostics)
	}
}

func TestTools_RedirectingServiceFailsAndTheRedirectIsNotFollowed(t *testing.T) {
	target := newToolService(t, recordNote)
	svc := newToolService(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "r-1", "arguments": map[string]any{"text": "hi"}})
	if code != 200 || !resp.Result.IsError || !strings.Contains(resp.Result.Content[0].Text, "302 Found; redirects are not followed") {
		t.Fatalf("redirecting service: %d %+v", code, resp)
	}
	if target.calls.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestTools_ServiceFailuresAreErrorResults(t *testing.T) {
	for _, tt := range []struct {
		name   string
		handle http.HandlerFunc
		want   string
	}{
		{"5xx", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }, "answered 500 Internal Server Error"},
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }, "not a tool answer"},
		{"no content", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"isError":false}`)) }, `no "content"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := newToolService(t, tt.handle)
			_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
			_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "f", "arguments": map[string]any{"text": "hi"}})
			if !resp.Executed || !resp.Result.IsError || !strings.Contains(resp.Result.Content[0].Text, tt.want) {
				t.Fatalf("%+v, want an error result with %q", resp, tt.want)
			}
		})
	}
}

func TestTools_NotRunnableAndBadRequests(t *testing.T) {
	svc := newToolService(t, recordNote)
	reg := runnableRegistry(svc.URL, 5)
	reg.Tools = append(reg.Tools, contract.Tool{Name: "declared_only", Description: "Runs in the agent", Extension: "review-extension"})
	_, ts, _ := newTestServer(t, reg)
	for _, tt := range []struct {
		name string
		call map[string]any
		code int
		want string
	}{
		{"declared_only", map[string]any{"id": "1"}, 404, "declaration without an implementation"},
		{"nope", map[string]any{"id": "1"}, 404, "not in the registry"},
		{"review_note", map[string]any{"arguments": map[string]any{"text": "x"}}, 400, "call.id is required"},
		{"review_note", map[string]any{"id": "1", "name": "other"}, 400, "does not match"},
	} {
		code, _, e := runTool(t, ts.URL, tt.name, tt.call)
		if code != tt.code || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s %v: %d %q, want %d %q", tt.name, tt.call, code, e.Error, tt.code, tt.want)
		}
	}
	if svc.calls.Load() != 0 {
		t.Fatal("service called")
	}
}

// A schema hostd cannot compile fails the load: running the tool without its
// argument check would be failing open. The last good context keeps serving.
func TestTools_UncompilableSchemaFailsTheReload(t *testing.T) {
	svc := newToolService(t, recordNote)
	s, ts, dir := newTestServer(t, runnableRegistry(svc.URL, 5))
	bad := runnableRegistry(svc.URL, 5)
	bad.Tools[1].InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"strin"}}}`)
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, bad))
	err := s.Reload(t.Context(), true)
	if err == nil || !strings.Contains(err.Error(), `tool "review_note": inputSchema does not compile`) {
		t.Fatalf("reload: %v", err)
	}
	if code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "1", "arguments": map[string]any{"text": 1}}); code != 200 || resp.Executed {
		t.Fatalf("the last good context (and its schema) should still serve: %d %+v", code, resp)
	}
}
