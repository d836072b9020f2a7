package materialize

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// editNeverDelete lets agents edit /workspace but never delete in it,
// write and delete in /tmp, and connect to no port.
func editNeverDelete() *contract.Sandbox {
	return &contract.Sandbox{
		Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{
			{Path: "/", Access: []string{"execute", "read"}},
			{Path: "/tmp", Access: []string{"create", "read", "remove", "write"}},
			{Path: "/workspace", Access: []string{"create", "read", "write"}},
		}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{}},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
}

// A declared sandbox switches Claude Code's own sandbox on from managed
// settings: enabled, failing where bubblewrap cannot run, no unsandboxed
// retry, Bash writable only where the declaration lets the agent write,
// create and remove, and denied writes in /workspace (so it never deletes
// there, even as its working directory), no domain but hostd's, and
// bypass-permissions mode disabled. Without one, the settings say nothing
// of a sandbox.
func TestBuild_ClaudeCodeSandboxFromTheDeclaration(t *testing.T) {
	in := sampleInput()
	if strings.Contains(files(t, mustBuild(t, in, Options{ClaudeCode: true}))[ManagedSettingsFile], "sandbox") {
		t.Fatal("no sandbox declared, yet the settings name one")
	}
	in.Manifest.Registry.Sandbox = editNeverDelete()
	var got struct {
		Sandbox     map[string]any `json:"sandbox"`
		Permissions map[string]any `json:"permissions"`
	}
	if err := json.Unmarshal([]byte(files(t, mustBuild(t, in, Options{ClaudeCode: true}))[ManagedSettingsFile]), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": false,
		"filesystem": map[string]any{"allowWrite": []any{"/tmp"}, "denyWrite": []any{"/workspace"}},
		"network":    map[string]any{"allowedDomains": []any{"127.0.0.1"}, "allowManagedDomainsOnly": true},
	}
	if !reflect.DeepEqual(got.Sandbox, want) {
		t.Errorf("sandbox %v, want %v", got.Sandbox, want)
	}
	if got.Permissions["disableBypassPermissionsMode"] != "disable" {
		t.Errorf("permissions %v: bypass-permissions mode not disabled", got.Permissions)
	}

	// Declared hosts are the domains Claude Code's filter allows beside
	// hostd's, by name (its filter knows no ports).
	in.Manifest.Registry.Sandbox.Network.Hosts = []string{"*.npmjs.org:443", "github.com:443", "github.com:8443"}
	if err := json.Unmarshal([]byte(files(t, mustBuild(t, in, Options{ClaudeCode: true}))[ManagedSettingsFile]), &got); err != nil {
		t.Fatal(err)
	}
	if want := []any{"127.0.0.1", "*.npmjs.org", "github.com"}; !reflect.DeepEqual(got.Sandbox["network"].(map[string]any)["allowedDomains"], want) {
		t.Errorf("allowedDomains %v, want %v", got.Sandbox["network"], want)
	}
}

// A declared sandbox pins Codex's sandbox modes in requirements.toml, in
// CODEX_HOME and /etc alike: never danger-full-access, workspace-write only
// where something is writable.
func TestBuild_CodexRequirementsPinTheSandboxModes(t *testing.T) {
	in := sampleInput()
	in.Manifest.Registry.Sandbox = editNeverDelete()
	for _, opts := range []Options{{Codex: true}, {ManagedEtc: true}} {
		req := files(t, mustBuild(t, in, opts))[CodexRequirementsFile]
		if !strings.Contains(req, "\nallowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\n") {
			t.Errorf("%+v: requirements.toml does not pin the modes:\n%s", opts, req)
		}
	}
	in.Manifest.Registry.Sandbox = &contract.Sandbox{Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{{Path: "/", Access: []string{"read"}}}}}
	if req := files(t, mustBuild(t, in, Options{Codex: true}))[CodexRequirementsFile]; !strings.Contains(req, "\nallowed_sandbox_modes = [\"read-only\"]\n") {
		t.Errorf("read-only declaration: requirements.toml:\n%s", req)
	}
}

// Where the platform starts every agent under `loadout sandbox`, Claude
// Code's own sandbox is a second layer that may be unavailable: it stays on
// but no longer stops Claude Code from starting.
func TestBuild_ClaudeCodeSandboxOptionalUnderLoadoutSandbox(t *testing.T) {
	in := sampleInput()
	in.Manifest.Registry.Sandbox = editNeverDelete()
	in.Manifest.Registry.Sandbox.AgentsUnderLoadoutSandbox = true
	var got struct {
		Sandbox map[string]any `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(files(t, mustBuild(t, in, Options{ClaudeCode: true}))[ManagedSettingsFile]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Sandbox["enabled"] != true || got.Sandbox["failIfUnavailable"] != false || got.Sandbox["allowUnsandboxedCommands"] != false {
		t.Errorf("sandbox %v: want enabled, not required, no unsandboxed retry", got.Sandbox)
	}
}
