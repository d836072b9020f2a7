package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// FuzzAnswer: the hook input comes from Claude Code, but a broken or hostile
// one must never crash the hook or produce an answer that lets a call run
// unchecked. With hostd unreachable, every input gets an answer; a
// PreToolUse-shaped answer is always a deny with a reason, and an answer
// that names no event either decides nothing or blocks with a reason.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{},"tool_response":{"success":true}}`,
		`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{},"error":"exit 1"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp__loadout__review_note","tool_input":{"text":"x"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp__loadout__"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":[1]}`,
		`{"hook_event_name":"Notification"}`, `null`, `{`, ``,
	} {
		f.Add(seed)
	}
	down := "http://" + testnet.FreeAddr(f) // nothing listens there
	h := Hook{Policy: HostdClient{URL: down, Timeout: time.Second}, MCPServer: "loadout"}
	f.Fuzz(func(t *testing.T, input string) {
		out := h.AnswerJSON(context.Background(), strings.NewReader(input))
		if hso := out.HookSpecificOutput; hso != nil {
			if hso.HookEventName != PreToolUse || hso.PermissionDecision != DecisionDeny || hso.PermissionDecisionReason == "" {
				t.Fatalf("input %q with hostd down answered %+v, want a deny with a reason", input, hso)
			}
			return
		}
		if out.Decision != "" && (out.Decision != "block" || out.Reason == "") {
			t.Fatalf("input %q answered %+v", input, out)
		}
		var in Input
		if json.Unmarshal([]byte(input), &in) == nil && in.HookEventName == PreToolUse {
			t.Fatalf("PreToolUse %q with hostd down was not denied: %+v", input, out)
		}
	})
}

func TestToolName_OnlyTheConfiguredServersToolsAreRenamed(t *testing.T) {
	h := Hook{MCPServer: "loadout"}
	for in, want := range map[string]string{
		"mcp__loadout__review_note": "review_note",
		"mcp__other__review_note":   "mcp__other__review_note",
		"mcp__loadout__":            "mcp__loadout__",
		"Bash":                      "Bash",
	} {
		if got := h.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakePolicy blocks the tools named in deny, answers events from events
// and records what it was asked.
type fakePolicy struct {
	deny   map[string]string
	err    error
	after  []exthost.ToolResult
	called []string
	events map[vocab.HookEvent]exthost.EventOutcome
}

func (p *fakePolicy) Before(_ context.Context, call exthost.ToolCall) (BeforeVerdict, error) {
	p.called = append(p.called, call.Name)
	if p.err != nil {
		return BeforeVerdict{}, p.err
	}
	if reason, ok := p.deny[call.Name]; ok {
		return BeforeVerdict{Blocked: &exthost.ToolResult{IsError: true, Content: []exthost.Content{{Type: "text", Text: reason}}}}, nil
	}
	return BeforeVerdict{}, nil
}

func (p *fakePolicy) Event(_ context.Context, req exthost.EventRequest) (exthost.EventOutcome, error) {
	p.called = append(p.called, string(req.Event))
	if p.err != nil {
		return exthost.EventOutcome{}, p.err
	}
	if out, ok := p.events[req.Event]; ok {
		return out, nil
	}
	return exthost.EventOutcome{Allowed: true}, nil
}

func (p *fakePolicy) After(_ context.Context, _ exthost.ToolCall, result exthost.ToolResult) ([]exthost.Diagnostic, error) {
	p.after = append(p.after, result)
	return []exthost.Diagnostic{{ExtensionID: "x", Hook: "audit", Kind: exthost.DiagnosticAudit, Message: "seen"}}, nil
}

func answer(t *testing.T, h Hook, input string) string {
	t.Helper()
	b, err := json.Marshal(h.AnswerJSON(context.Background(), strings.NewReader(input)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnswer_AnAllowedCallCarriesNoDecisionUnlessAutoAllow(t *testing.T) {
	p := &fakePolicy{deny: map[string]string{"Write": "no writes"}}
	in := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`
	if got, want := answer(t, Hook{Policy: p}, in), `{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}`; got != want {
		t.Errorf("allowed call answered %s, want %s", got, want)
	}
	if got := answer(t, Hook{Policy: p, AutoAllow: true}, in); !strings.Contains(got, `"permissionDecision":"allow"`) {
		t.Errorf("allowed call with AutoAllow answered %s, want an allow", got)
	}
	denied := `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{},"tool_use_id":"t2"}`
	for _, h := range []Hook{{Policy: p}, {Policy: p, AutoAllow: true}} {
		if got := answer(t, h, denied); !strings.Contains(got, `"permissionDecision":"deny","permissionDecisionReason":"no writes"`) {
			t.Errorf("denied call answered %s", got)
		}
	}
	if got := answer(t, Hook{Policy: &fakePolicy{err: errors.New("hostd down")}, AutoAllow: true}, in); !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "hostd down") {
		t.Errorf("a policy error answered %s, want a deny saying why", got)
	}
}

func TestAnswer_PostToolUseFailureFeedsTheAfterHooksAFailedResult(t *testing.T) {
	p := &fakePolicy{}
	got := answer(t, Hook{Policy: p}, `{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"tool_use_id":"t3","error":"Exit code 1"}`)
	if len(p.after) != 1 || !p.after[0].IsError || ResultText(p.after[0]) != "Exit code 1" || p.after[0].ToolCallID != "t3" {
		t.Fatalf("after hooks got %+v, want one failed result with the error", p.after)
	}
	if want := `{"systemMessage":"Loadout after hooks: x/audit audit: seen"}`; got != want {
		t.Errorf("answered %s, want %s", got, want)
	}
	answer(t, Hook{Policy: p, MCPServer: "loadout"}, `{"hook_event_name":"PostToolUseFailure","tool_name":"mcp__loadout__review_note","tool_input":{},"tool_use_id":"t4","error":"x"}`)
	if len(p.after) != 1 {
		t.Errorf("hostd's own MCP tool was reported again: %+v", p.after)
	}
}

func TestAnswer_OtherEventsGetTheirOwnShape(t *testing.T) {
	p := &fakePolicy{}
	for _, in := range []string{
		`{"hook_event_name":"Notification"}`,
		`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{}}`,
	} {
		if got := answer(t, Hook{Policy: p}, in); got != `{}` {
			t.Errorf("%s answered %s, want {}", in, got)
		}
	}
	if len(p.called) != 0 {
		t.Errorf("other events asked the policy: %v", p.called)
	}
	if got := answer(t, Hook{Policy: p}, `{"tool_name":"Bash"}`); !strings.Contains(got, `"decision":"block"`) {
		t.Errorf("input without an event answered %s, want a block", got)
	}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"PreToolUse","tool_input":1}`); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Errorf("unreadable PreToolUse answered %s, want a deny", got)
	}
}
