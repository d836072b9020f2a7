package exthost

import (
	"context"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
)

// sandboxedCall is shellCall by Pi in a Workspace whose context declares a
// sandbox that holds.
func sandboxedCall(line string) Input {
	in := shellCall(line)
	in.Workspace.Sandboxed = true
	in.Session.Agent = "pi"
	return in
}

// Where a declared sandbox holds, the samples' guard judges intent only:
// every everyday line (builds, tests, venvs, loops, git, package managers)
// is allowed, those it cannot read included, while every delete it can
// read is still denied. Without the sandbox the old fail-closed answers
// stand: the guard corpus's test (RHK3) runs with sandboxed false.
func TestSamplesGuard_UnderASandboxAllowsEverydayLinesItCannotRead_RHK3(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	refusedUnsandboxed := 0
	for _, tc := range shellcorpus.Everyday {
		if v, err := h.Evaluate(context.Background(), sandboxedCall(tc.Line)); err != nil || !v.Allowed {
			t.Errorf("sandboxed: %q: %+v, %v; want allowed", tc.Line, v, err)
		}
		if v, err := h.Evaluate(context.Background(), shellCall(tc.Line)); err != nil || !v.Allowed {
			refusedUnsandboxed++
		}
	}
	t.Logf("without a sandbox the guard refuses %d of %d everyday lines; with one, none", refusedUnsandboxed, len(shellcorpus.Everyday))
	if refusedUnsandboxed == 0 {
		t.Error("the guard refuses no everyday line without a sandbox: this test proves nothing")
	}
	for _, line := range []string{
		"rm -rf x", "rm -r x", "find x -delete", "git clean -fdx", "find x -exec rm -rf {} +", "echo x | xargs rm -r",
		`python3 -c 'import shutil; shutil.rmtree("x")'`, `perl -MFile::Path=remove_tree -e 'remove_tree("x")'`,
		"tar --remove-files -cf t.tar x", "sh -c 'rm -r x'", "timeout 5 rm -r x",
	} {
		if v, err := h.Evaluate(context.Background(), sandboxedCall(line)); err == nil && v.Allowed {
			t.Errorf("sandboxed: %q allowed; a delete the guard can read stays denied", line)
		}
	}
}

// Only a sandbox that holds the filesystem and refuses unsandboxed agents
// lets the guard relax: a network-only one, or one that lets agents run
// unsandboxed, does not.
func TestSandboxHolds_OnlyAFilesystemSandboxThatRefusesUnsandboxedAgents(t *testing.T) {
	fs := &contract.SandboxFilesystem{Paths: []contract.SandboxPath{{Path: "/", Access: []string{"read"}}}}
	for _, tc := range []struct {
		s    *contract.Sandbox
		want bool
	}{
		{nil, false},
		{&contract.Sandbox{Network: &contract.SandboxNetwork{}, UnsandboxedAgents: contract.UnsandboxedRefuse}, false},
		{&contract.Sandbox{Filesystem: fs, UnsandboxedAgents: contract.UnsandboxedAllow}, false},
		{&contract.Sandbox{Filesystem: fs, UnsandboxedAgents: contract.UnsandboxedRefuse}, true},
	} {
		if got := SandboxHolds(tc.s); got != tc.want {
			t.Errorf("SandboxHolds(%+v) = %v, want %v", tc.s, got, tc.want)
		}
	}
	h, _ := NewHostFromRegistry(context.Background(), contract.Registry{Sandbox: &contract.Sandbox{Filesystem: fs, UnsandboxedAgents: contract.UnsandboxedRefuse}}, WorkspaceInfo{Name: "w"}, nil)
	if !h.Workspace().Sandboxed {
		t.Error("a host rebuilt from a registry with a sandbox that holds does not say so")
	}
}

// `sandboxed` is true only for the agents whose every command the sandbox
// holds: Codex's workspace-write lets it delete in its working directory,
// so for Codex (and an agent that does not say which it is) the guard keeps
// refusing what it cannot read.
func TestSamplesGuard_SandboxedOnlyForAgentsTheSandboxHolds_RSB4(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	line := "x=rm; $x -rf x" // opaque: a name known only at run time
	for agent, allowed := range map[string]bool{"pi": true, "claude-code": true, "codex": false, "": false} {
		in := sandboxedCall(line)
		in.Session.Agent = agent
		v, err := h.Evaluate(context.Background(), in)
		if err != nil || v.Allowed != allowed {
			t.Errorf("agent %q: %+v, %v; want allowed %v", agent, v, err, allowed)
		}
		// Where the platform starts every agent under `loadout sandbox`,
		// the sandbox holds whatever the agent.
		in.Workspace.EveryAgentSandboxed = true
		if v, err := h.Evaluate(context.Background(), in); err != nil || !v.Allowed {
			t.Errorf("agent %q under loadout sandbox: %+v, %v; want allowed", agent, v, err)
		}
	}
}
