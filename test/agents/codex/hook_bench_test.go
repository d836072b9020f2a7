package codex

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// BenchmarkCodexHook is what `loadout hook codex` adds to one Codex tool
// call: a process start and one hostd round trip, on the samples' policy
// (the shell guard parses the command line).
func BenchmarkCodexHook(b *testing.B) {
	h := agenttest.StartHostd(b, agenttest.PreviewSamples(b))
	input := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"c1"}`
	bin := agenttest.Loadout(b)
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(bin, "hook", "codex", "--hostd-url", h.URL)
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(bytes.TrimSpace(out), []byte("{}")) {
			b.Fatalf("hook: %v %s", err, out)
		}
	}
}
