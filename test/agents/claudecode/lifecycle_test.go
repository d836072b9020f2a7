package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// lifecycleEvents are the Claude Code events docs/agents.md maps to
// Loadout's, with whether a failing hook blocks.
var lifecycleEvents = map[string]bool{
	"SessionStart": false, "UserPromptSubmit": true, "PreToolUse": true,
	"PostToolUse": false, "PostToolUseFailure": false, "PreCompact": true, "SessionEnd": false,
	"Stop": false, "SubagentStop": false,
}

// NewLifecycleAgent sets Claude Code up on the lifecycle fixture Workspace
// (the Pi package's, integrations/pi/test/fixtures/lifecycle) with a hook at
// every event docs/agents.md maps, wired to hostd as wiring says, and a
// stand-in terraform on PATH that records its arguments in the working
// directory's TERRAFORM_ARGS.
func NewLifecycleAgent(t *testing.T, wiring Wiring, script ...Turn) *Agent {
	t.Helper()
	return newHookedAgent(t, wiring, agenttest.PiFixture("lifecycle"), script...)
}

// newHookedAgent is NewLifecycleAgent on the Workspace in dir.
func newHookedAgent(t *testing.T, wiring Wiring, dir string, script ...Turn) *Agent {
	t.Helper()
	data := agenttest.PreviewSamples(t, dir)
	a := &Agent{Hostd: agenttest.StartHostd(t, data, "--claude-code")}
	a.Model = NewModel(t, script...)
	a.Session = NewSession(t, a.Model)
	bin := agenttest.TerraformStandIn(t)
	for i, e := range a.Session.Env {
		if rest, ok := strings.CutPrefix(e, "PATH="); ok {
			a.Session.Env[i] = "PATH=" + bin + ":" + rest
		}
	}
	a.Session.Args = []string{"--settings", lifecycleSettings(t, wiring, a.Hostd.URL), "--strict-mcp-config", "--allowedTools", "Bash"}
	return a
}

// lifecycleSettings hooks every mapped event to hostd, as the http hook or
// the command hook. SessionStart is always the command hook: Claude Code
// skips http hooks there ("HTTP hooks are not supported for SessionStart").
func lifecycleSettings(t *testing.T, wiring Wiring, hostdURL string) string {
	t.Helper()
	hooks := map[string]any{}
	for event, block := range lifecycleEvents {
		h := map[string]any{"type": "http", "url": hostdURL + "/v1/hooks/claude-code", "timeout": 60}
		if wiring == CommandHook || event == "SessionStart" {
			h = map[string]any{"type": "command", "command": agenttest.Loadout(t) + " hook claude-code --hostd-url " + hostdURL, "timeout": 60}
		}
		if block {
			h["onFailure"] = "block"
		}
		hooks[event] = []any{map[string]any{"matcher": "*", "hooks": []any{h}}}
	}
	return writeManagedHooks(t, hooks)
}

// A UserInput hook denies a prompt with a secret: nothing reaches the model
// and the user gets the hook's message. A UserInput rewrite Claude Code
// cannot apply blocks the prompt the same way, saying so.
func TestClaudeCode_UserInputDeniesASecretPrompt(t *testing.T) { // R-LC-4
	for _, c := range []struct {
		wiring       Wiring
		prompt, want string
	}{
		{HTTPHook, "deploy with the SECRET hunter2", "prompts must not carry secrets"},
		{CommandHook, "deploy with the SECRET hunter2", "prompts must not carry secrets"},
		{HTTPHook, "the password is hunter2", "cannot replace a prompt"},
	} {
		t.Run(string(c.wiring)+"/"+c.want, func(t *testing.T) {
			a := NewLifecycleAgent(t, c.wiring)
			out, stderr, _ := a.Session.Run(t, c.prompt)
			for _, r := range a.Model.Requests() {
				if strings.Contains(r.Raw, "hunter2") {
					t.Fatalf("the prompt reached the model: %s", r.Raw)
				}
			}
			if !strings.Contains(out+stderr, c.want) {
				t.Errorf("the user did not get %q:\nstdout: %s\nstderr: %s", c.want, out, stderr)
			}
		})
	}
}

// SessionStart's context and BeforeAgentStart's context reach the model.
func TestClaudeCode_SessionStartAndTurnContextReachTheModel(t *testing.T) {
	for _, wiring := range []Wiring{HTTPHook, CommandHook} {
		t.Run(string(wiring), func(t *testing.T) {
			a := NewLifecycleAgent(t, wiring)
			a.Run(t, "hello there")
			a.Model.FirstAgentRequest(t).MustReach(t, map[string]string{
				"SessionStart's context":     "TENANT-CONTEXT: you work for namespace team-a",
				"BeforeAgentStart's context": "TURN-CONTEXT for: hello there",
			})
		})
	}
}

// A BeforeToolCall rewrite is what runs (terraform apply gains -dry-run) and
// what the after hooks see; a rewrite Bash's input schema refuses is refused
// by Claude Code, which validates updatedInput (hostd has no schema for
// Claude Code's own tools); an ask in a headless claude -p blocks with its
// message.
func TestClaudeCode_BeforeToolCallRewriteAskAndSchema(t *testing.T) {
	for _, wiring := range []Wiring{HTTPHook, CommandHook} {
		t.Run(string(wiring), func(t *testing.T) {
			a := NewLifecycleAgent(t, wiring,
				Turn{Tools: []ToolUse{{ID: "toolu_tf", Name: "Bash", Input: map[string]any{"command": "terraform apply", "description": "apply"}}}},
				Turn{Tools: []ToolUse{{ID: "toolu_broke", Name: "Bash", Input: map[string]any{"command": "echo BROKE > broke.txt", "description": "broke"}}}},
				Turn{Tools: []ToolUse{{ID: "toolu_ask", Name: "Bash", Input: map[string]any{"command": "echo deploy > deployed.txt", "description": "deploy"}}}},
			)
			a.Run(t, "apply, break, deploy")
			agenttest.TerraformRanWith(t, a.Session.WorkDir, "apply -dry-run", "")
			results := a.Model.ToolResults()
			if tf := results["toolu_tf"]; tf.IsError || !strings.Contains(tf.Text, "terraform apply -dry-run") {
				t.Errorf("the model got %+v for terraform apply, want the rewritten call's output", tf)
			}
			agenttest.NoFileLeft(t, filepath.Join(a.Session.WorkDir, "broke.txt"), "the schema-breaking rewrite ran", "")
			if broke := results["toolu_broke"]; !broke.IsError || !strings.Contains(broke.Text, "failed schema validation") {
				t.Errorf("the model got %+v for the schema-breaking rewrite, want Claude Code's schema error", broke)
			}
			agenttest.NoFileLeft(t, filepath.Join(a.Session.WorkDir, "deployed.txt"), "the asked call ran headless", "")
			if ask := results["toolu_ask"]; !ask.IsError || !strings.Contains(ask.Text, "ASK: deploys need a human") {
				t.Errorf("the model got %+v for the asked call, want a block with the ask's message", ask)
			}
			if n := hookDiagnostics(t, a.Hostd.URL, "saw-original"); n != 0 {
				t.Errorf("an after hook saw the unrewritten call (%d findings)", n)
			}
			if n := hookDiagnostics(t, a.Hostd.URL, "saw-dry-run"); n == 0 {
				t.Error("the after hooks did not see the rewritten call")
			}
		})
	}
}

// hookDiagnostics is hostd's count of a hook's audit findings, from its
// metrics.
func hookDiagnostics(t *testing.T, hostdURL, hook string) int {
	t.Helper()
	_, body := testnet.Get(t, hostdURL+"/metrics")
	n := 0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "loadout_hostd_hook_diagnostics_total{") && strings.Contains(line, `hook="`+hook+`"`) && strings.Contains(line, `kind="audit"`) {
			n++
		}
	}
	return n
}

// refusingWorkspace is a Workspace whose SessionStart hook refuses every
// session.
const refusingWorkspace = `apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    loadout.dev/trust: trusted
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata:
  name: dev
  namespace: team-a
spec:
  instructions:
    - inline: You work on team-a's infrastructure.
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata:
  name: closed
  namespace: team-a
spec:
  description: Refuses sessions.
  hooks:
    - name: closed
      event: SessionStart
      cel:
        expression: "false"
        message: SESSION-REFUSED by the platform
`

// A SessionStart denial refuses the session's prompts: none reaches the
// model (Claude Code cannot refuse a session from SessionStart itself).
func TestClaudeCode_SessionStartDenialRefusesThePrompts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte(refusingWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newHookedAgent(t, HTTPHook, dir)
	out, stderr, _ := a.Session.Run(t, "hello there")
	if reqs := a.Model.AgentRequests(); len(reqs) != 0 {
		t.Errorf("the prompt reached the model in a refused session: %s", reqs[0].Raw)
	}
	if !strings.Contains(out+stderr, "SESSION-REFUSED") {
		t.Errorf("the user was not told why:\nstdout: %s\nstderr: %s", out, stderr)
	}
}
