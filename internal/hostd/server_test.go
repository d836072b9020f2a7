package hostd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

func callBody(id, name, text string) map[string]any {
	return map[string]any{"call": map[string]any{"id": id, "name": name, "arguments": map[string]any{"text": text}}}
}

// the fixed example (docs/rules.md) over HTTP: an ordinary note is allowed (the agent runs the core),
// a secret note gets a result paired with its own call id and tool name.
func TestBefore_FixedExample_S9_RHK2(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var raw map[string]any
	if code := post(t, ts.URL+"/v1/before", callBody("n-1", "review_note", "looks good"), &raw); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(raw) != 2 || raw["allowed"] != true || raw["afterHooks"] != true {
		t.Fatalf(`allowed call answered %v, want exactly {"allowed":true,"afterHooks":true}`, raw)
	}
	var resp BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("n-2", "review_note", "SECRET"), &resp)
	if resp.Allowed || resp.Result == nil || resp.Result.ToolCallID != "n-2" || resp.Result.ToolName != "review_note" ||
		!resp.Result.IsError || resp.Result.Content[0].Text != "notes must not contain secrets" || resp.Result.Details["reason"] == nil {
		t.Fatalf("secret note: %+v", resp)
	}
	if len(resp.Diagnostics) != 0 {
		t.Fatalf("a deny is not a diagnostic: %+v", resp.Diagnostics)
	}
}

func TestBefore_DeniedToolBlocked_REXT5(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var resp BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("b-1", "bash", "ls"), &resp)
	if resp.Allowed || resp.Result.ToolCallID != "b-1" || resp.Result.Details["policy"] != "deny" {
		t.Fatalf("denied built-in: %+v", resp)
	}
}

func TestBefore_FailingHookFailsClosedWithDiagnostic_RHK3(t *testing.T) {
	reg := fixedRegistry()
	reg.Hooks[0].CEL.Expression = "call.arguments.missing == 'x'"
	_, ts, _ := newTestServer(t, reg)
	var resp BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("e-1", "review_note", "hi"), &resp)
	if resp.Allowed || resp.Result.ToolCallID != "e-1" || len(resp.Diagnostics) != 1 ||
		resp.Diagnostics[0].ExtensionID != "review-extension" || resp.Diagnostics[0].Kind != exthost.DiagnosticError {
		t.Fatalf("failing hook: %+v", resp)
	}
}

func TestAfter_DiagnosticsOnly_RHK5(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	ok := map[string]any{"call": map[string]any{"id": "a-1", "name": "review_note"},
		"result": map[string]any{"toolCallId": "a-1", "toolName": "review_note", "isError": false, "content": []any{map[string]any{"type": "text", "text": "ok"}}}}
	var resp AfterResponse
	if code := post(t, ts.URL+"/v1/after", ok, &resp); code != 200 || resp.Diagnostics == nil || len(resp.Diagnostics) != 0 {
		t.Fatalf("status %d resp %+v", code, resp)
	}
	ok["result"].(map[string]any)["isError"] = true
	post(t, ts.URL+"/v1/after", ok, &resp)
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Kind != exthost.DiagnosticAudit || resp.Diagnostics[0].Message != "tool failed" {
		t.Fatalf("audit finding: %+v", resp)
	}
	metrics := get(t, ts.URL+"/metrics")
	if !strings.Contains(metrics, `loadout_hostd_hook_diagnostics_total{extension="review-extension",hook="observe",kind="audit"} 1`) {
		t.Fatalf("diagnostic not in metrics:\n%s", grepLines(metrics, "loadout_hostd"))
	}
}

func TestRenderAndActivate(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var msg map[string]any
	if code := post(t, ts.URL+"/v1/render", RenderRequest{Template: "review", Args: map[string]string{"file": "a.go", "owner": "ann"}}, &msg); code != 200 {
		t.Fatalf("render status %d: %v", code, msg)
	}
	b, _ := json.Marshal(msg)
	if want := `{"content":[{"text":"Review a.go for ann. Focus on a.go.","type":"text"}],"role":"user","timestamp":42}`; string(b) != want {
		t.Fatalf("render = %s", b)
	}
	var e ErrorResponse
	if code := post(t, ts.URL+"/v1/render", RenderRequest{Template: "review", Args: map[string]string{"file": "a.go"}}, &e); code != 422 || !strings.Contains(e.Error, "owner") {
		t.Fatalf("missing arg: %d %+v", code, e)
	}
	var skill struct {
		Name, Body string
		Files      []struct{ Request, Source, Content string }
	}
	if code := post(t, ts.URL+"/v1/activate", ActivateRequest{Skill: "review", Files: []string{"checklist.md"}}, &skill); code != 200 ||
		skill.Body != "Project review body" || len(skill.Files) != 1 || skill.Files[0].Content != "- tests" {
		t.Fatalf("activate %d %+v", code, skill)
	}
	if code := post(t, ts.URL+"/v1/activate", ActivateRequest{Skill: "review", Files: []string{"../etc/passwd"}}, &e); code != 422 {
		t.Fatalf("traversal answered %d", code)
	}
}

func TestBadRequests(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	for _, tt := range []struct {
		path, body string
		code       int
	}{
		{"/v1/before", `{`, 400},
		{"/v1/before", `{"call":{"name":"x"}}`, 400},
		{"/v1/before", `{"call":{"id":"1","name":"x"}} {}`, 400},
		{"/v1/after", `{"call":{"id":"1","name":"x"}}`, 400},
		{"/v1/before", `{"call":{"id":"1","name":"x","arguments":{"t":"` + strings.Repeat("a", MaxBodyBytes) + `"}}}`, 413},
	} {
		var e ErrorResponse
		if code := post(t, ts.URL+tt.path, tt.body, &e); code != tt.code || e.Error == "" {
			t.Errorf("%s %.40s: %d %+v, want %d with an error", tt.path, tt.body, code, e, tt.code)
		}
	}
	if code, _ := testnet.Get(t, ts.URL+"/v1/before"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /v1/before: %d", code)
	}
}

func TestRegistryHealthAndReadiness(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var reg RegistryResponse
	if err := json.Unmarshal([]byte(get(t, ts.URL+"/v1/registry")), &reg); err != nil {
		t.Fatal(err)
	}
	// The denied built-in bash is not published as callable; the deny list is (R-EXT-5).
	if !strings.HasPrefix(reg.Hash, contract.HashPrefix) || len(reg.Tools) != 1 || reg.Tools[0].Name != "review_note" ||
		len(reg.Hooks) != 2 || !slices.Equal(reg.Deny, []string{"bash"}) {
		t.Fatalf("registry %+v", reg)
	}
	if get(t, ts.URL+"/healthz") != "ok\n" {
		t.Fatal("healthz")
	}
	if !strings.Contains(get(t, ts.URL+"/readyz"), reg.Hash) {
		t.Fatal("readyz does not name the served hash")
	}
}

func TestNotReadyUntilLoaded(t *testing.T) {
	s := New(Options{ContextDir: t.TempDir()})
	if err := s.Reload(context.Background(), true); err == nil {
		t.Fatal("empty directory loaded")
	}
	for _, path := range []string{"/readyz", "/v1/registry"} {
		rec := serve(s, http.MethodGet, path, "")
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s: %d", path, rec.Code)
		}
	}
	if rec := serve(s, http.MethodPost, "/v1/before", `{"call":{"id":"1","name":"x"}}`); rec.Code != 503 {
		t.Fatalf("before without context: %d", rec.Code)
	}
}

func TestConcurrentRequests(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 25 {
				text := "fine"
				if (i+j)%2 == 0 {
					text = "SECRET"
				}
				var resp BeforeResponse
				post(t, ts.URL+"/v1/before", callBody("c", "review_note", text), &resp)
				if resp.Allowed != (text == "fine") {
					t.Errorf("%q: allowed %v", text, resp.Allowed)
					return
				}
			}
		})
	}
	wg.Wait()
}

// get is GET url's body, whatever its status.
func get(t testing.TB, url string) string {
	t.Helper()
	_, body := testnet.Get(t, url)
	return body
}

func serve(s *Server, method, path, body string) *httptest.ResponseRecorder {
	req, _ := http.NewRequestWithContext(context.Background(), method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// A before answer says whether any after hook observes the tool, with the
// hooks' own matching, so an agent skips POST /v1/after only when it would
// run nothing: never for a tool an after hook names by class, and never on
// the word of a blocked call.
func TestBefore_AfterHooksSaysWhetherAnyAfterHookObservesTheTool(t *testing.T) {
	reg := contract.Registry{
		Tools: []contract.Tool{{Name: "bash", Builtin: true}, {Name: "read", Builtin: true}, {Name: "grep", Builtin: true}},
		Hooks: []contract.Hook{
			{Extension: "audit", Name: "shell-audit", Event: contract.EventAfterToolResult, Tools: []string{"shell"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "true"}},
			{Extension: "audit", Name: "read-failures", Event: contract.EventToolFailure, Tools: []string{"READ"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "true"}},
			{Extension: "audit", Name: "no-grep", Event: contract.EventBeforeToolCall, Tools: []string{"grep"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "false", Message: "no grep"}},
			{Extension: "audit", Name: "grep-audit", Event: contract.EventAfterToolResult, Tools: []string{"grep"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "true"}},
		},
		Extensions: []string{"audit"},
	}
	_, ts, _ := newTestServer(t, reg)
	for _, tc := range []struct {
		tool              string
		allowed, observed bool
	}{
		{"bash", true, true},   // the shell class
		{"Bash", true, true},   // Claude Code's name for it
		{"read", true, true},   // a ToolFailure hook, named in another case
		{"edit", true, false},  // no after hook names it
		{"grep", false, false}, // blocked: it will not run
	} {
		var resp BeforeResponse
		if code := post(t, ts.URL+"/v1/before", map[string]any{"call": map[string]any{"id": "1", "name": tc.tool, "arguments": map[string]any{}}}, &resp); code != 200 {
			t.Fatalf("%s: status %d", tc.tool, code)
		}
		if resp.Allowed != tc.allowed || resp.AfterHooks != tc.observed {
			t.Errorf("%s: allowed %v afterHooks %v, want %v %v", tc.tool, resp.Allowed, resp.AfterHooks, tc.allowed, tc.observed)
		}
	}
}
