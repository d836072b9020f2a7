package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// startHostdOnSamples runs hostd on the context `loadout preview -f
// config/samples` publishes, unchanged.
func startHostdOnSamples(t *testing.T) string {
	t.Helper()
	return startHostdOnPreview(t, samplesDir)
}

// startHostdOnPreview runs hostd, as a real HTTP server on loopback, on the
// context `loadout preview -f manifests` publishes.
func startHostdOnPreview(t *testing.T, manifests string) string {
	t.Helper()
	return serveHostd(t, hostd.Options{ContextDir: previewDir(t, "-f", manifests)})
}

// serveHostd loads opts' context into a hostd that logs nowhere and serves
// its API on loopback until the test ends; it returns the API's URL.
func serveHostd(t *testing.T, opts hostd.Options) string {
	t.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	s := hostd.New(opts)
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	return testnet.ServeHandler(t, s.Handler()).URL
}

const guardReason = "platform policy: recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)"

// TestSamplesGuard_DeniesEveryRecursiveForceSpellingForEveryAgentsShell_RLC3:
// through hostd, the samples' platform guard (match.tools: [shell]) denies a
// recursive force remove in every spelling, for Pi's bash (the Pi package
// asks /v1/before) and for Claude Code's and Codex's Bash (through `loadout
// hook claude-code`; Codex with --pass-on-allow) and for Claude Code's
// PowerShell (read as PowerShell: Remove-Item -Recurse too), and lets the
// commands that only mention one run. A command that does not parse is
// blocked too.
func TestSamplesGuard_DeniesEveryRecursiveForceSpellingForEveryAgentsShell_RLC3(t *testing.T) {
	url := startHostdOnSamples(t)
	denied := []string{
		"rm -rf build", "rm -fr build", "rm -r -f build", "rm -Rf build", "rm --recursive --force build",
		"bash -c 'rm -rf x'", "/bin/rm -rf /", "env X=1 rm -rf /", "sudo rm -rf /", "touch MARKER && rm -rf build",
	}
	allowed := []string{"grep -rn 'rm -rf' docs", `echo "rm -rf"`, "ls -la", "rm build.log"}

	agents := map[string]func(command string) guardVerdict{
		"Pi bash": func(command string) guardVerdict {
			out := askBash(t, url, "c1", command)
			v := guardVerdict{denied: !out.Allowed}
			if out.Result != nil && len(out.Result.Content) > 0 {
				v.reason = out.Result.Content[0].Text
			}
			return v
		},
		"Claude Code Bash": func(command string) guardVerdict {
			return hookVerdict(t, runHook(t, preToolUse("Bash", map[string]any{"command": command, "description": "x"}), "--hostd-url", url))
		},
		"Claude Code PowerShell": func(command string) guardVerdict {
			return hookVerdict(t, runHook(t, preToolUse("PowerShell", map[string]any{"command": command, "description": "x"}), "--hostd-url", url))
		},
		"Codex Bash": func(command string) guardVerdict {
			input, _ := json.Marshal(map[string]any{
				"session_id": "s", "transcript_path": nil, "cwd": "/work", "hook_event_name": "PreToolUse", "model": "gpt",
				"permission_mode": "default", "tool_name": "Bash", "tool_input": map[string]any{"command": command},
				"tool_use_id": "call_1", "turn_id": "t1",
			})
			return hookVerdict(t, runHook(t, string(input), "--hostd-url", url, "--pass-on-allow"))
		},
	}
	for agent, ask := range agents {
		if agent == "Claude Code PowerShell" {
			for _, command := range []string{"Remove-Item -Recurse -Force build", "ri build -r", "gci build -r | rm", "iex $s"} {
				if v := ask(command); !v.denied || !strings.Contains(v.reason, guardReason) {
					t.Errorf("%s %q: %+v, want denied by the platform guard", agent, command, v)
				}
			}
		}
		for _, command := range denied {
			if v := ask(command); !v.denied || !strings.Contains(v.reason, guardReason) {
				t.Errorf("%s %q: %+v, want denied by the platform guard", agent, command, v)
			}
		}
		for _, command := range allowed {
			if v := ask(command); v.denied {
				t.Errorf("%s %q: denied (%s)", agent, command, v.reason)
			}
		}
		if v := ask("rm -rf 'build"); !v.denied || !strings.Contains(v.reason, "no-recursive-delete") {
			t.Errorf("%s, a command that does not parse: %+v, want blocked by the failed hook", agent, v)
		}
	}
}

// askBash asks hostd's /v1/before about a bash call of command, which it
// must answer.
func askBash(t *testing.T, url, id, command string) hostd.BeforeResponse {
	t.Helper()
	var out hostd.BeforeResponse
	body := map[string]any{"call": map[string]any{"id": id, "name": "bash", "arguments": map[string]any{"command": command}}}
	if code := testnet.PostJSON(t, url+"/v1/before", body, &out); code != http.StatusOK {
		t.Fatalf("/v1/before: %d", code)
	}
	return out
}

// guardVerdict is an agent's answer to a shell call.
type guardVerdict struct {
	denied bool
	reason string
}

// hookVerdict reads a PreToolUse answer: denied when it says deny.
func hookVerdict(t *testing.T, answer map[string]any) (v guardVerdict) {
	t.Helper()
	hso, _ := answer["hookSpecificOutput"].(map[string]any)
	if hso == nil || hso["hookEventName"] != "PreToolUse" {
		t.Fatalf("answer %v is not a PreToolUse answer", answer)
	}
	v.denied = hso["permissionDecision"] == "deny"
	v.reason, _ = hso["permissionDecisionReason"].(string)
	return v
}
