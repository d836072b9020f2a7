package hostd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/claudecode"
)

func preToolUseInput(tool, args string) string {
	return `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + args + `,"tool_use_id":"toolu_1"}`
}

// The http hook answers as the command hook does, from the loaded context:
// no decision for an allowed call (allow with autoAllow), a deny with the
// hook's message, and a deny for anything it cannot decide; always 200, since
// Claude Code lets a call run when an http hook fails and says nothing else.
func TestClaudeCodeHook_AnswersFromTheLoadedContext(t *testing.T) { // R-AG-3
	_, ts, _ := newTestServer(t, fixedRegistry())
	url := ts.URL + ClaudeCodeHookPath
	cases := []struct {
		name, query, input string
		want               claudecode.Output
	}{
		{"allowed", "", preToolUseInput("mcp__loadout__review_note", `{"text":"fine"}`),
			claudecode.Output{HookSpecificOutput: &claudecode.SpecificOutput{HookEventName: "PreToolUse"}}},
		{"allowed, autoAllow", "?autoAllow=true", preToolUseInput("mcp__loadout__review_note", `{"text":"fine"}`),
			claudecode.Output{HookSpecificOutput: &claudecode.SpecificOutput{HookEventName: "PreToolUse", PermissionDecision: "allow", PermissionDecisionReason: "allowed by the Workspace's Loadout policy"}}},
		{"hook denies", "?autoAllow=true", preToolUseInput("mcp__loadout__review_note", `{"text":"a SECRET"}`),
			claudecode.Output{HookSpecificOutput: &claudecode.SpecificOutput{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: "notes must not contain secrets"}}},
		{"another server's tool keeps its name", "?mcpServer=other", preToolUseInput("mcp__loadout__review_note", `{"text":"a SECRET"}`),
			claudecode.Output{HookSpecificOutput: &claudecode.SpecificOutput{HookEventName: "PreToolUse"}}},
		{"Stop", "", `{"hook_event_name":"Stop"}`, claudecode.Output{}},
		{"no event", "", `{"tool_name":"bash"}`, claudecode.Output{Decision: "block", Reason: "Loadout could not read the hook input (hook_event_name is required); the call is blocked"}},
	}
	for _, c := range cases {
		var got claudecode.Output
		if code := post(t, url+c.query, c.input, &got); code != http.StatusOK {
			t.Fatalf("%s: status %d", c.name, code)
		}
		if want, g := mustJSON(t, c.want), mustJSON(t, got); want != g {
			t.Errorf("%s: answered %s, want %s", c.name, g, want)
		}
	}
	var got claudecode.Output
	post(t, url+"?autoAllow=maybe", preToolUseInput("Read", `{}`), &got)
	if got.HookSpecificOutput == nil || got.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(got.HookSpecificOutput.PermissionDecisionReason, "autoAllow") {
		t.Errorf("invalid autoAllow answered %+v, want a deny naming it", got)
	}
	post(t, url, preToolUseInput("bash", `{"command":"ls"}`), &got)
	if got.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(got.HookSpecificOutput.PermissionDecisionReason, `"bash" is denied`) {
		t.Errorf("tools.deny: %+v", got.HookSpecificOutput)
	}
}

// A page in a browser cannot use the hook endpoint: it is behind the same
// Host, Origin and content-type checks as the rest of /v1.
func TestClaudeCodeHook_RefusesBrowserRequests(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	for name, mutate := range map[string]func(*http.Request){
		"text/plain": func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") },
		"cross-origin": func(r *http.Request) {
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			r.Header.Set("Origin", "https://evil.example")
		},
		"rebound host":    func(r *http.Request) { r.Host = "evil.example:8181" },
		"no content type": func(r *http.Request) { r.Header.Del("Content-Type") },
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+ClaudeCodeHookPath, strings.NewReader(preToolUseInput("Read", `{}`)))
		req.Header.Set("Content-Type", "application/json")
		mutate(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s: status %d, want refused", name, resp.StatusCode)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
