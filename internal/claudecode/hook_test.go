package claudecode

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// FuzzAnswer: the hook input comes from Claude Code, but a broken or hostile
// one must never crash the hook or produce an answer that lets a call run
// unchecked. With hostd unreachable, every input gets an answer, and a
// PreToolUse-shaped answer is always a deny with a reason.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{},"tool_response":{"success":true}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp__loadout__review_note","tool_input":{"text":"x"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp__loadout__"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":[1]}`,
		`{"hook_event_name":"Stop"}`, `null`, `{`, ``,
	} {
		f.Add(seed)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	_ = l.Close()
	h := Hook{HostdURL: down, MCPServer: "loadout", Timeout: time.Second}
	f.Fuzz(func(t *testing.T, input string) {
		out := h.Answer(context.Background(), strings.NewReader(input))
		if out.HookSpecificOutput == nil {
			if !strings.Contains(input, PostToolUse) {
				t.Fatalf("no hookSpecificOutput for %q: %+v", input, out)
			}
			return
		}
		hso := out.HookSpecificOutput
		if hso.HookEventName != PreToolUse || hso.PermissionDecision != DecisionDeny || hso.PermissionDecisionReason == "" {
			t.Fatalf("input %q with hostd down answered %+v, want a deny with a reason", input, hso)
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
