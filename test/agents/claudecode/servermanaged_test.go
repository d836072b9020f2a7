package claudecode

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/messages"
)

// onFirstParty moves a's session from the scripted model's URL to
// api.anthropic.com, played on loopback by messages.FirstParty, whose
// settings endpoint answers org (nil: the organisation has none). Only a
// first-party session is eligible for server-managed settings: with
// ANTHROPIC_BASE_URL set to another host Claude Code never asks.
func onFirstParty(t *testing.T, a *Agent, org map[string]any) *messages.FirstParty {
	t.Helper()
	api := messages.NewFirstParty(t, a.Model, org)
	a.Session.Env = slices.DeleteFunc(a.Session.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=")
	})
	a.Session.Env = append(a.Session.Env, api.Env...)
	return api
}

// rmScript is a turn that asks for rm -rf build, which the platform's
// guard denies.
var rmScript = Turn{Tools: []ToolUse{{ID: "toolu_rm", Name: "Bash", Input: map[string]any{"command": "rm -rf build", "description": "remove build"}}}}

// The question, asked of the real CLI: the organisation the
// tenant's credential belongs to serves server-managed settings. Claude
// Code 2.1.328 fetches them at start ("first-wins", its default, makes the
// highest managed source present the whole managed tier), so the file
// Loadout writes, /etc/claude-code/managed-settings.json, no longer counts:
// its hooks do not run and rm -rf build runs. With no settings on the
// server the same session is governed. hostd tells the two apart: the
// displaced session opens its MCP server (managed-mcp.json still counts)
// and calls no hook, which hostd counts as an agent without hooks once
// --hook-watch-grace has passed; the governed one is never counted.
func TestClaudeCode_ServerManagedSettingsDisplaceTheManagedFile(t *testing.T) { // R-AG-4
	if !ManagedInstall() {
		t.Skip("no private /etc/claude-code here (unshare --mount refused): the managed file cannot be installed")
	}
	for _, tc := range []struct {
		name     string
		org      map[string]any
		governed bool
	}{
		{name: "no-server-settings", org: nil, governed: true},
		{name: "server-settings", org: map[string]any{"cleanupPeriodDays": 30}, governed: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgentWithHostdArgs(t, []string{"--hook-watch-grace", watchGrace.String()}, HTTPHook, rmScript)
			api := onFirstParty(t, a, tc.org)
			marker := agenttest.BuildMarker(t, a.Session.WorkDir)
			a.Run(t, "clean up")
			if len(api.SettingsFetches()) == 0 {
				t.Fatalf("Claude Code never asked the organisation's settings endpoint (proxy refused %v)", api.Refused())
			}
			rm := a.Model.ToolResults()["toolu_rm"]
			denied := strings.Contains(rm.Text, "platform policy: recursive deletes")
			// What hostd sees, the signal of the LoadoutAgentWithoutHooks
			// alert: Claude Code still opens hostd's MCP server (managed
			// by managed-mcp.json), but without the hooks no hook request
			// arrives.
			seen := hostdRequests(t, a.Hostd.URL)
			hooked := seen["hooks_claude_code"] + seen["events"]
			if seen["mcp initialize"] == 0 {
				t.Errorf("hostd saw no MCP initialize: %v", seen)
			}
			if tc.governed {
				agenttest.FileLeft(t, marker, "rm -rf build ran", "")
				if !denied {
					t.Errorf("the model got %+v for rm -rf build, want the guard's reason", rm)
				}
				if hooked == 0 {
					t.Errorf("a governed session sent hostd no hook request: %v", seen)
				}
				time.Sleep(2 * watchGrace)
				if n := agentsWithoutHooks(t, a.Hostd.URL); n != 0 {
					t.Errorf("hostd counted %v agents without hooks for a governed session", n)
				}
				return
			}
			agenttest.NoFileLeft(t, marker, "rm -rf build was denied: the managed file still governs beside server-managed settings", "")
			if denied {
				t.Errorf("the guard denied rm -rf build: %+v", rm)
			}
			if hooked != 0 {
				t.Errorf("the displaced session still sent hostd %v hook requests: %v", hooked, seen)
			}
			// hostd tells: the session opened its MCP server and called no
			// hook within the grace.
			deadline := time.Now().Add(10 * watchGrace)
			for agentsWithoutHooks(t, a.Hostd.URL) == 0 && time.Now().Before(deadline) {
				time.Sleep(watchGrace / 4)
			}
			if n := agentsWithoutHooks(t, a.Hostd.URL); n != 1 {
				t.Errorf("hostd counted %v agents without hooks, want 1", n)
			}
		})
	}
}

// watchGrace is hostd's --hook-watch-grace in these tests: how long after
// Claude Code opens the MCP server a hook must arrive.
const watchGrace = 3 * time.Second

// hostdMetrics is hostd's /metrics text.
func hostdMetrics(t *testing.T, hostdURL string) string {
	t.Helper()
	resp, err := http.Get(hostdURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// agentsWithoutHooks is hostd's loadout_hostd_agents_without_hooks_total.
func agentsWithoutHooks(t *testing.T, hostdURL string) float64 {
	t.Helper()
	m := withoutHooksLine.FindStringSubmatch(hostdMetrics(t, hostdURL))
	if m == nil {
		t.Fatal("hostd exports no loadout_hostd_agents_without_hooks_total")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var withoutHooksLine = regexp.MustCompile(`(?m)^loadout_hostd_agents_without_hooks_total (\S+)$`)

// hostdRequests are hostd's loadout_hostd_requests_total, summed by
// endpoint, from its /metrics.
func hostdRequests(t *testing.T, hostdURL string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range requestsLine.FindAllStringSubmatch(hostdMetrics(t, hostdURL), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		out[m[1]] += v
	}
	return out
}

// requestsLine is one sample of loadout_hostd_requests_total: its endpoint
// label and value.
var requestsLine = regexp.MustCompile(`(?m)^loadout_hostd_requests_total\{[^}]*endpoint="([^"]*)"[^}]*\} (\S+)$`)

// plantRemoteSettingsCache writes what Claude Code keeps of the last
// server-managed settings it fetched, ~/.claude/remote-settings.json, into
// the session's home: a tenant's to write (its volume, its image, an init
// container), no organisation needed.
func plantRemoteSettingsCache(t *testing.T, home string, settings map[string]any) {
	t.Helper()
	b, err := json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "remote-settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The same displacement needs no organisation: with the settings endpoint
// out of reach (an egress that blocks it, or no network), Claude Code falls
// back to the copy it keeps in the user's home, and a copy the tenant
// planted there becomes the managed tier. With the model behind the
// platform's gateway (ANTHROPIC_BASE_URL in the agent container's
// environment, as the bound pod's admission sets it from loadout-hostd's
// claudeCodeBaseURL) the session is not eligible for server-managed
// settings at all: the organisation's settings and the planted copy are
// both ignored, the endpoint is never asked, and the hooks run.
func TestClaudeCode_AGatewayKeepsServerManagedSettingsAndAPlantedCopyOut(t *testing.T) { // R-AG-4
	if !ManagedInstall() {
		t.Skip("no private /etc/claude-code here (unshare --mount refused): the managed file cannot be installed")
	}
	org := map[string]any{"cleanupPeriodDays": 30}
	for _, tc := range []struct {
		name string
		// gateway sets ANTHROPIC_BASE_URL to the platform's gateway (the
		// scripted model, on loopback).
		gateway, unreachable, planted bool
		governed                      bool
	}{
		{name: "first-party-planted-copy-endpoint-unreachable", unreachable: true, planted: true, governed: false},
		{name: "gateway-organisation-settings", gateway: true, governed: true},
		{name: "gateway-planted-copy", gateway: true, planted: true, governed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgent(t, HTTPHook, rmScript)
			api := onFirstParty(t, a, org)
			if tc.unreachable {
				api.SettingsUnreachable()
			}
			if tc.gateway {
				a.Session.Env = append(a.Session.Env, "ANTHROPIC_BASE_URL="+a.Model.URL)
			}
			if tc.planted {
				plantRemoteSettingsCache(t, a.Session.Home, org)
			}
			marker := agenttest.BuildMarker(t, a.Session.WorkDir)
			a.Run(t, "clean up")
			rm := a.Model.ToolResults()["toolu_rm"]
			denied := strings.Contains(rm.Text, "platform policy: recursive deletes")
			if !tc.governed {
				agenttest.NoFileLeft(t, marker, "rm -rf build was denied: the planted copy did not displace the managed file", "")
				if denied {
					t.Errorf("the guard denied rm -rf build: %+v", rm)
				}
				return
			}
			agenttest.FileLeft(t, marker, "rm -rf build ran", "")
			if !denied {
				t.Errorf("the model got %+v for rm -rf build, want the guard's reason", rm)
			}
			if !tc.gateway {
				return
			}
			if n := len(api.SettingsFetches()); n != 0 {
				t.Errorf("behind the gateway Claude Code still asked the organisation's settings endpoint %d times", n)
			}
			if reqs := api.APIRequests(); len(reqs) != 0 {
				t.Errorf("behind the gateway Claude Code still reached %s: %v", messages.APIHost, reqs)
			}
		})
	}
}

// What the managed file itself can do about it, measured: pinning the
// model route there (env.ANTHROPIC_BASE_URL with allowedProviders
// ["customEndpoint"]) does not help, since Claude Code decides eligibility
// from its process environment before the file's env applies, and the
// organisation's settings still displace the hooks. forceLoginOrgUUID,
// which applies ahead of server-managed settings, refuses to start any
// session with an API key, gateway or not: a refusal, not a way to keep an
// API key's session governed.
func TestClaudeCode_TheManagedFileCannotKeepServerManagedSettingsOut(t *testing.T) { // R-AG-4
	if !ManagedInstall() {
		t.Skip("no private /etc/claude-code here (unshare --mount refused): the managed file cannot be installed")
	}
	org := map[string]any{"cleanupPeriodDays": 30}
	t.Run("pinned-model-route", func(t *testing.T) {
		a := NewAgent(t, HTTPHook, rmScript)
		api := onFirstParty(t, a, org)
		a.EditManagedSettings(t, func(s map[string]any) {
			s["env"] = map[string]any{"ANTHROPIC_BASE_URL": a.Model.URL}
			s["allowedProviders"] = []string{"customEndpoint"}
		})
		marker := agenttest.BuildMarker(t, a.Session.WorkDir)
		a.Run(t, "clean up")
		if len(api.SettingsFetches()) == 0 {
			t.Error("Claude Code did not ask the organisation's settings endpoint")
		}
		agenttest.NoFileLeft(t, marker, "rm -rf build was denied: the file's pin kept the hooks", "")
	})
	t.Run("forceLoginOrgUUID", func(t *testing.T) {
		a := NewAgent(t, HTTPHook, rmScript)
		onFirstParty(t, a, org)
		a.EditManagedSettings(t, func(s map[string]any) { s["forceLoginOrgUUID"] = "00000000-0000-4000-8000-000000000000" })
		marker := agenttest.BuildMarker(t, a.Session.WorkDir)
		_, stderr, err := a.Session.Run(t, "clean up")
		if err == nil || !strings.Contains(stderr, "forceLoginOrgUUID") || !strings.Contains(stderr, "ANTHROPIC_API_KEY") {
			t.Errorf("claude -p with an API key under forceLoginOrgUUID: %v, %s; want a refusal naming both", err, stderr)
		}
		agenttest.FileLeft(t, marker, "rm -rf build ran", "")
		if n := len(a.Model.AgentRequests()); n != 0 {
			t.Errorf("the refused session still asked the model %d times", n)
		}
	})
}
