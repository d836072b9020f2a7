package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// claudeWorkspace is the samples' dev Workspace naming Claude Code's own
// tools: Bash and Write are built in, Bash is denied.
const claudeWorkspace = `apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata:
  name: dev
  namespace: team-a
spec:
  tools:
    builtin: [Bash, Write]
    deny: [Bash]
`

// startSamplesHostd runs hostd, as a real HTTP server on loopback, on the
// context the samples publish with claudeWorkspace.
func startSamplesHostd(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	for _, f := range files {
		if strings.Contains(f, "workspace") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "workspace.yaml"), []byte(claudeWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	return startHostdOnPreview(t, src)
}

// runHook runs `loadout hook claude-code` with input on stdin and returns its
// stdout as a generic JSON object.
func runHook(t *testing.T, input string, args ...string) map[string]any {
	t.Helper()
	return runAgentHook(t, "claude-code", input, args...)
}

func preToolUse(tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work", "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01",
	})
	return string(b)
}

// decision returns hookSpecificOutput, failing unless it is exactly Claude
// Code's PreToolUse shape with the wanted decision.
func decision(t *testing.T, answer map[string]any, want string) string {
	t.Helper()
	hso, ok := answer["hookSpecificOutput"].(map[string]any)
	if !ok || len(answer) != 1 {
		t.Fatalf("answer %v: want only hookSpecificOutput", answer)
	}
	reason, _ := hso["permissionDecisionReason"].(string)
	if hso["hookEventName"] != "PreToolUse" || hso["permissionDecision"] != want || reason == "" || len(hso) != 3 {
		t.Fatalf("hookSpecificOutput %v: want PreToolUse %q with a reason", hso, want)
	}
	return reason
}

func TestHookClaudeCode_AllowCarriesNoDecisionUnlessAutoAllow(t *testing.T) {
	url := startSamplesHostd(t)
	for _, tool := range []string{"Write", "mcp__loadout__review_note"} {
		input := preToolUse(tool, map[string]any{"text": "parser.go:42 drops an error", "file_path": "/work/a.go"})
		// By default Claude Code's own permission rules and prompts decide.
		answer := runHook(t, input, "--hostd-url", url)
		if hso, _ := answer["hookSpecificOutput"].(map[string]any); len(answer) != 1 || len(hso) != 1 || hso["hookEventName"] != "PreToolUse" {
			t.Fatalf("%s allowed: %v, want no decision", tool, answer)
		}
		decision(t, runHook(t, input, "--hostd-url", url, "--auto-allow"), "allow")
		// The old opt-out is accepted and changes nothing.
		if answer := runHook(t, input, "--hostd-url", url, "--pass-on-allow"); answer["hookSpecificOutput"].(map[string]any)["permissionDecision"] != nil {
			t.Fatalf("--pass-on-allow: %v", answer)
		}
	}
}

// The sample platform hook denies a SECRET note when the agent calls the
// tool through hostd's MCP server (mcp__loadout__review_note is review_note
// to match.tools), and tools.deny names the agent's Bash as Bash. Claude
// Code and Codex read the same PreToolUse deny shape, with hostd's reason.
func TestHook_DenyAnswersDocumentedShapeWithHostdReason(t *testing.T) {
	url := startSamplesHostd(t)
	for _, agent := range []string{"claude-code", "codex"} {
		t.Run(agent, func(t *testing.T) {
			reason := decision(t, runAgentHook(t, agent, preToolUse("mcp__loadout__review_note", map[string]any{"text": "the SECRET is 42"}), "--hostd-url", url), "deny")
			if reason != "review notes must not contain secrets" {
				t.Fatalf("deny reason %q", reason)
			}
			reason = decision(t, runAgentHook(t, agent, preToolUse("Bash", map[string]any{"command": "ls"}), "--hostd-url", url), "deny")
			if !strings.Contains(reason, `tool "Bash" is denied`) {
				t.Fatalf("tools.deny reason %q", reason)
			}
		})
	}
}

// Another MCP server's tools keep their full names: the hook renames only
// its own server's.
func TestHookClaudeCode_OtherMCPServersToolsKeepTheirNames(t *testing.T) {
	url := startSamplesHostd(t)
	decision(t, runHook(t, preToolUse("mcp__other__review_note", map[string]any{"text": "the SECRET is 42"}), "--hostd-url", url, "--auto-allow"), "allow")
}

func TestHookClaudeCode_HostdDownOrUnreadableInputDenies(t *testing.T) {
	down := "http://" + testnet.FreeAddr(t) // nothing listens there
	reason := decision(t, runHook(t, preToolUse("Write", map[string]any{"file_path": "/a"}), "--hostd-url", down), "deny")
	if !strings.Contains(reason, "could not get a policy decision from hostd") || !strings.Contains(reason, "blocked") {
		t.Fatalf("hostd down: %q", reason)
	}
	up := startSamplesHostd(t)
	decision(t, runHook(t, `{"hook_event_name":"PreToolUse"}`, "--hostd-url", up), "deny")
	// Input whose event cannot be read blocks without naming an event:
	// Claude Code refuses a hookSpecificOutput for another event.
	for _, input := range []string{"", "{", `{"tool_name":"Bash"}`} {
		if answer := runHook(t, input, "--hostd-url", up); answer["decision"] != "block" || answer["reason"] == "" || answer["hookSpecificOutput"] != nil {
			t.Fatalf("input %q: %v, want decision block with a reason", input, answer)
		}
	}
	// Events the hook does not act on get {}: no decision.
	if answer := runHook(t, `{"hook_event_name":"Stop","tool_name":"Bash"}`, "--hostd-url", up); len(answer) != 0 {
		t.Fatalf("Stop: %v, want {}", answer)
	}
}

func TestHookClaudeCode_PostToolUseReportsToAfterHooks(t *testing.T) {
	url := startSamplesHostd(t)
	post := func(tool string) map[string]any {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": "toolu_02",
			"tool_input": map[string]any{"file_path": "/a"}, "tool_response": map[string]any{"filePath": "/a", "success": true}})
		return runHook(t, string(b), "--hostd-url", url)
	}
	if answer := post("Write"); len(answer) != 0 {
		t.Fatalf("PostToolUse without diagnostics: %v", answer)
	}
	down := "http://" + testnet.FreeAddr(t)
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "t", "tool_response": "ok"})
	answer := runHook(t, string(b), "--hostd-url", down)
	if msg, _ := answer["systemMessage"].(string); !strings.Contains(msg, "after hooks did not run") || answer["hookSpecificOutput"] != nil {
		t.Fatalf("PostToolUse with hostd down: %v", answer)
	}
}
