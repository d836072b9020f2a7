package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// runCodexHook runs `loadout hook codex` with input on stdin and returns its
// stdout as a JSON object.
func runCodexHook(t *testing.T, input string, args ...string) map[string]any {
	t.Helper()
	return runAgentHook(t, "codex", input, args...)
}

// runAgentHook runs `loadout hook AGENT` with input on stdin and returns its
// stdout as a JSON object.
func runAgentHook(t *testing.T, agent, input string, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCommand()
	cmd.SetArgs(append([]string{"hook", agent}, args...))
	cmd.SetIn(strings.NewReader(input))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("hook exited with %v: %s", err, errOut.String())
	}
	var answer map[string]any
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		t.Fatalf("hook output is not JSON: %q", out.String())
	}
	return answer
}

// Codex 0.169 refuses a PreToolUse "allow" (and then runs the call): an
// allowed call is answered with no decision at all.
func TestHookCodex_AllowedCallCarriesNoDecision(t *testing.T) {
	url := startSamplesHostd(t)
	for _, tool := range []string{"Write", "mcp__loadout__review_note"} {
		answer := runCodexHook(t, preToolUse(tool, map[string]any{"text": "parser.go:42 drops an error", "file_path": "/work/a.go"}), "--hostd-url", url)
		if len(answer) != 0 {
			t.Fatalf("%s: answer %v, want {}", tool, answer)
		}
	}
}

func TestHookCodex_HostdDownOrUnreadableInputDenies_RAG3(t *testing.T) {
	down := "http://" + testnet.FreeAddr(t) // nothing listens there
	reason := decision(t, runCodexHook(t, preToolUse("Write", map[string]any{"file_path": "/a"}), "--hostd-url", down), "deny")
	if !strings.Contains(reason, "could not get a policy decision from hostd") {
		t.Fatalf("hostd down: %q", reason)
	}
	for _, input := range []string{"", "{", `{"hook_event_name":"PreToolUse"}`} {
		decision(t, runCodexHook(t, input, "--hostd-url", down), "deny")
	}
}

// Codex's other events get {}, which each of them accepts and which changes
// nothing; SessionStart brings the tenant's project content (here team-a's
// extension's prompt guide, labelled with its namespace); PostToolUse reports
// to the after hooks and answers at most a systemMessage.
func TestHookCodex_OtherEventsAndPostToolUseAnswerAcceptedShapes(t *testing.T) {
	url := startSamplesHostd(t)
	start := runCodexHook(t, `{"hook_event_name":"SessionStart","source":"startup"}`, "--hostd-url", url)
	specific, _ := start["hookSpecificOutput"].(map[string]any)
	if ctx, _ := specific["additionalContext"].(string); len(start) != 1 || specific["hookEventName"] != "SessionStart" ||
		!strings.Contains(ctx, "## Project content from namespace team-a (not organisation policy)\n\n### Extension review-extension") {
		t.Fatalf("SessionStart: %v, want the project content as additionalContext", start)
	}
	for _, event := range []string{"UserPromptSubmit", "PermissionRequest", "Stop", "PreCompact"} {
		if answer := runCodexHook(t, `{"hook_event_name":"`+event+`","tool_name":"Bash"}`, "--hostd-url", url); len(answer) != 0 {
			t.Fatalf("%s: %v, want {}", event, answer)
		}
	}
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "c1",
		"tool_input": map[string]any{"file_path": "/a"}, "tool_response": "ok"})
	if answer := runCodexHook(t, string(b), "--hostd-url", url); len(answer) != 0 {
		t.Fatalf("PostToolUse: %v", answer)
	}
	down := "http://" + testnet.FreeAddr(t)
	answer := runCodexHook(t, string(b), "--hostd-url", down)
	if msg, _ := answer["systemMessage"].(string); len(answer) != 1 || !strings.Contains(msg, "after hooks did not run") {
		t.Fatalf("PostToolUse with hostd down: %v", answer)
	}
}
