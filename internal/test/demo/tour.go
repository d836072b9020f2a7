package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The tour after the sample tool's calls: an ask approved by someone else
// (approvals.go), an MCP server's tool behind a hook (mcp.go), what the
// same Workspace gives other agents, the decision ledger those calls left,
// and `loadout test` catching a weakened guard before it merges. Each step
// runs the real CLI or server and fails the demo when it does not show
// what it says.

// weakenedGuardRule is the line of the samples' platform guard that refuses
// recursive deletes; the tour's "head" drops it.
const weakenedGuardRule = "          || (c.name in ['rm', 'grm', 'srm', 'wipe'] && (c.hasFlag('r', 'R', 'recursive') || c.via != ''))\n"

// tourCalls are the calls `loadout test` replays against base and head.
const tourCalls = `- name: recursive delete
  tool: bash
  arguments: {command: rm -rf build}
- name: list files
  tool: bash
  arguments: {command: ls -la}
`

// tour is what the tour's steps share: the MCP server the demo serves and
// what hostd and the deciders need for Approvals.
type tour struct {
	mcp       *mcpServer
	approvals *approvals
}

// applyTour applies the tour's platform Extensions beside the samples, so
// the Workspace is published with them: the approval gate and the MCP
// server (which the demo starts first, since the manager discovers it).
func (d *demo) applyTour(ctx context.Context) (*tour, error) {
	if err := d.applyProdGuard(ctx); err != nil {
		return nil, err
	}
	m, err := d.applyMCPExtension(ctx)
	if err != nil {
		return nil, err
	}
	return &tour{mcp: m}, nil
}

// runTour runs the steps after the sample tool's calls, the ledger last
// but one so that it holds every decision the tour made.
func (d *demo) runTour(ctx context.Context, hd *sidecar, t *tour, res *Result) error {
	if err := d.approveAsk(ctx, hd.base, t.approvals, res); err != nil {
		return err
	}
	if err := d.callMCPTool(ctx, hd.base, t.mcp, res); err != nil {
		return err
	}
	if err := d.showAgentLayouts(ctx, hd.volume); err != nil {
		return err
	}
	if err := d.verifyLedger(ctx, hd.ledger); err != nil {
		return err
	}
	if err := d.catchWeakenedGuard(ctx); err != nil {
		return err
	}
	d.nextSteps()
	return nil
}

// showAgentLayouts writes the served context as Claude Code and Codex read it.
func (d *demo) showAgentLayouts(ctx context.Context, volume string) error {
	for _, agent := range []struct{ flag, name, files string }{
		{"--claude-code", "Claude Code", "CLAUDE.md, commands/, managed-settings.json (its hooks call hostd)"},
		{"--codex", "Codex", "AGENTS.md, skills/, hooks.json, requirements.toml"},
	} {
		out := filepath.Join(d.workDir, strings.TrimPrefix(agent.flag, "--"))
		d.step("The same Workspace for %s: loadout materialize --context-dir … --out %s %s", agent.name, out, agent.flag)
		if _, err := d.cli(ctx, "materialize", "--context-dir", volume, "--out", out, agent.flag); err != nil {
			return err
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "..") {
				names = append(names, e.Name())
			}
		}
		fmt.Fprintf(d.out, "%s\n(%s reads %s)\n", strings.Join(names, "  "), agent.name, agent.files)
	}
	return nil
}

// verifyLedger checks the chain of decision records hostd wrote for the
// demo's calls.
func (d *demo) verifyLedger(ctx context.Context, ledger string) error {
	d.step("The decision ledger hostd wrote for those calls: loadout audit verify %s", ledger)
	out, err := d.cli(ctx, "audit", "verify", ledger)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "records") {
		return fmt.Errorf("loadout audit verify printed %q: no records", out)
	}
	return nil
}

// catchWeakenedGuard replays two shell calls against config/samples and a
// copy whose guard no longer refuses recursive deletes, as CI would on a
// pull request: `loadout test` names the call that now gets through and
// fails.
func (d *demo) catchWeakenedGuard(ctx context.Context) error {
	samples := filepath.Join(d.o.RepoRoot, "config", "samples")
	head := filepath.Join(d.workDir, "head")
	if err := os.CopyFS(head, os.DirFS(samples)); err != nil {
		return err
	}
	guard := filepath.Join(head, "platform_extension_guard.yaml")
	b, err := os.ReadFile(guard)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(weakenedGuardRule)) {
		return errors.New("the samples' guard no longer has the rule the tour removes")
	}
	if err := os.WriteFile(guard, bytes.Replace(b, []byte(weakenedGuardRule), nil, 1), 0o600); err != nil {
		return err
	}
	calls := filepath.Join(d.workDir, "calls.yaml")
	if err := os.WriteFile(calls, []byte(tourCalls), 0o600); err != nil {
		return err
	}
	d.step("A pull request drops the guard's rm -r rule; CI runs: loadout test --base config/samples --head <the change> calls.yaml")
	out, err := d.cli(ctx, "test", "--base", samples, "--head", head, calls)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "WEAKENED") {
		return fmt.Errorf("loadout test should fail naming the weakened guard: %w\n%s", err, out)
	}
	fmt.Fprintf(d.out, "(exit status %d: the change would let the recursive delete through, so CI fails it)\n", exit.ExitCode())
	return nil
}

// cli runs the loadout CLI, shows its output and returns it.
func (d *demo) cli(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.o.Loadout, args...)
	out, err := cmd.CombinedOutput()
	_, _ = d.out.Write(out)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), err
		}
		return string(out), fmt.Errorf("loadout %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// nextSteps ends the demo.
func (d *demo) nextSteps() {
	d.step("Next steps")
	fmt.Fprint(d.out, `- make demo KEEP=1: keep it running and edit config/samples; the context republishes in seconds;
  ask hostd for another terraform apply and decide it: kubectl get approvals -A, loadout approve / loadout deny --reason
- docs/hooks.md: write a hook (CEL or a webhook), send an ask to approvers ("Approvals"), rewrite a call
- docs/agents.md: Pi, Claude Code and Codex on a Workspace, in a bound pod too; put your own MCP server
  behind an Extension ("MCP servers behind an Extension"), pinned with loadout mcp pin
- docs/gitops.md: loadout preview and loadout test in CI, Argo CD and Flux
- README.md "Try it in a minute, without a cluster": loadout preview, loadout hostd and one curl
- README.md "Install on a cluster": the charts, a release of your own, kind
`)
}
