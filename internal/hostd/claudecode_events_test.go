package hostd

import (
	"fmt"
	"strings"
	"testing"
)

// hostd's http hook carries Claude Code's lifecycle events: a prompt with a
// secret is blocked, a rewrite is updatedInput, SessionStart adds context.
func TestClaudeCodeHook_LifecycleEvents(t *testing.T) {
	_, ts, _ := newTestServer(t, lifecycleRegistry("http://127.0.0.1:1"))
	url := ts.URL + ClaudeCodeHookPath
	var out map[string]any
	post(t, url, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "the SECRET"}, &out)
	if out["decision"] != "block" || out["reason"] != "prompts must not carry secrets" {
		t.Errorf("UserPromptSubmit with a secret: %v", out)
	}
	out = nil
	post(t, url, map[string]any{"hook_event_name": "SessionStart", "source": "startup"}, &out)
	// The hooks' context follows the Workspace's project content (here the
	// unlabelled extension's guide, project text without a namespace),
	// under its own heading.
	if s, _ := out["hookSpecificOutput"].(map[string]any); !strings.HasSuffix(fmt.Sprint(s["additionalContext"]), "Use review_note.\n\n"+tenantHookText("review-extension", "you work for team-a")) ||
		!strings.HasPrefix(fmt.Sprint(s["additionalContext"]), "# Project content\n\n") {
		t.Errorf("SessionStart: %v", out)
	}
	out = nil
	post(t, url, map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t1",
		"tool_input": map[string]any{"command": "terraform apply"}}, &out)
	s, _ := out["hookSpecificOutput"].(map[string]any)
	if in, _ := s["updatedInput"].(map[string]any); in["command"] != "terraform apply -dry-run" || s["permissionDecision"] != nil {
		t.Errorf("PreToolUse rewrite: %v", out)
	}
	out = nil
	post(t, url, map[string]any{"hook_event_name": "SessionEnd", "reason": "other"}, &out)
	if len(out) != 0 {
		t.Errorf("SessionEnd: %v", out)
	}
	out = nil
	post(t, url, map[string]any{"hook_event_name": "PreCompact", "trigger": "manual"}, &out)
	if len(out) != 0 {
		t.Errorf("PreCompact with no BeforeCompact hooks: %v", out)
	}
}
