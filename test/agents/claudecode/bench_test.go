package claudecode

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// BenchmarkClaudeCodeHook is the latency one Claude Code hook adds to a tool
// call, per wiring, side by side against the same hostd on the samples: a
// PreToolUse for Bash "ls -la", which the platform guard parses and allows.
// "http" is what managed-settings.json wires (Claude Code POSTs to hostd),
// with a kept-alive and a fresh connection per call; "command" starts
// `loadout hook claude-code` per call, as Claude Code does for a command
// hook. docs/benchmarks.md has the numbers.
func BenchmarkClaudeCodeHook(b *testing.B) {
	data := agenttest.PreviewSamples(b)
	h := agenttest.StartHostd(b, data)
	input := []byte(`{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"/work","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la","description":"list"},"tool_use_id":"toolu_1"}`)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}`
	check := func(b *testing.B, out []byte) {
		b.Helper()
		if got := strings.TrimSpace(string(out)); got != want {
			b.Fatalf("hook answered %s, want %s", got, want)
		}
	}
	post := func(b *testing.B, client *http.Client) {
		b.Helper()
		resp, err := client.Post(h.URL+"/v1/hooks/claude-code", "application/json", bytes.NewReader(input))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		check(b, out)
	}
	b.Run("http/keep-alive", func(b *testing.B) {
		client := &http.Client{}
		for b.Loop() {
			post(b, client)
		}
	})
	b.Run("http/new-connection", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		for b.Loop() {
			post(b, client)
		}
	})
	b.Run("command", func(b *testing.B) {
		bin := agenttest.Loadout(b)
		for b.Loop() {
			cmd := exec.Command(bin, "hook", "claude-code", "--hostd-url", h.URL)
			cmd.Stdin = bytes.NewReader(input)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			check(b, out)
		}
	})
}
