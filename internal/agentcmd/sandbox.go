package agentcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/sandbox"
)

// sandboxEnv is set in the environment of a command `loadout sandbox` runs
// under a sandbox, to the context hash it came from: a nested agent or
// integration can tell it already runs inside one.
const sandboxEnv = "LOADOUT_SANDBOXED"

// NewSandboxCommand runs a command under the context's declared sandbox
// (docs/security.md, "Sandbox").
func NewSandboxCommand() *cobra.Command {
	var (
		dir         string
		check       bool
		trust       ContextTrust
		egressHosts string
	)
	cmd := &cobra.Command{
		Use:   "sandbox [--from DIR] -- COMMAND [ARG...]",
		Short: "Run a command under the sandbox the context declares (Landlock)",
		Long: `Run COMMAND held to the sandbox the context mounted at --from declares
(manifest.json's sandbox: filesystem rights per path, TCP connect ports):
loadout restricts itself with Landlock, then execs COMMAND, so the command and
everything it starts keep the restriction; nothing it runs can lift it.

Where the sandbox names hosts (network.hosts), loadout first starts an egress
proxy on loopback, outside the sandbox, and points HTTPS_PROXY and HTTP_PROXY
at it: the command reaches those hosts by name through it (CONNECT or plain
HTTP), and no other; a refusal says which host and which rules. The proxy
exits with the last process of the command.

Where the kernel cannot enforce what is declared (no Landlock, or an ABI too
old for a declared right), the command does not run: the sandbox's
unsandboxedAgents: Allow is the only way to run it anyway, and then loadout
says so on stderr. A context that declares no sandbox runs COMMAND as is.

With --check, print the sandbox and whether this kernel can enforce it, as
JSON, and exit 0 when a command would run.

Given the platform's public keys (--context-keys or $LOADOUT_CONTEXT_KEYS with
--workspace), the context is verified as hostd verifies it first.`,
		Example: `  loadout sandbox -- bash -c 'make test'
  loadout sandbox --from /var/run/loadout/context -- pi
  loadout sandbox --check`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed(egressProxyFlag) {
				return serveEgressProxy(cmd.Context(), egressHosts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			pc, err := published.LoadDir(dir)
			if err != nil {
				return err
			}
			if err := trust.Verify(pc); err != nil {
				return err
			}
			m := pc.Manifest()
			if check {
				return writeSandboxCheck(cmd.OutOrStdout(), m.Registry.Sandbox)
			}
			if len(args) == 0 {
				return errors.New("no command: loadout sandbox [--from DIR] -- COMMAND [ARG...]")
			}
			return runSandboxed(cmd.Context(), cmd.ErrOrStderr(), m, args)
		},
	}
	cmd.Flags().StringVar(&dir, "from", DefaultContextDir, "directory where the context ConfigMap is mounted")
	cmd.Flags().BoolVar(&check, "check", false, "print the declared sandbox and whether this kernel can enforce it, and exit")
	cmd.Flags().StringVar(&egressHosts, egressProxyFlag, "", "serve as the egress proxy of a sandboxed command for these host rules (started by loadout sandbox itself)")
	_ = cmd.Flags().MarkHidden(egressProxyFlag)
	trust.Add(cmd)
	// COMMAND's own flags are its, with or without "--".
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// runSandboxed execs argv under m's sandbox; it returns only on failure.
func runSandboxed(ctx context.Context, stderr io.Writer, m contract.Manifest, argv []string) error {
	s := m.Registry.Sandbox
	env := os.Environ()
	if s != nil {
		env = append(env, sandboxEnv+"="+m.Hash)
		if sandbox.Check(s, sandbox.ABI()) == nil {
			// Declared hosts are reached through a proxy started before
			// the sandbox closes the network around the command.
			var err error
			if s, env, err = startEgressProxy(ctx, s, env); err != nil {
				return err
			}
		}
	}
	err := sandbox.Exec(s, argv, env)
	var u *sandbox.UnenforceableError
	if errors.As(err, &u) {
		if s.UnsandboxedAgents != contract.UnsandboxedAllow {
			return fmt.Errorf("%w; the context's sandbox refuses to run unsandboxed (unsandboxedAgents: %s)", err, s.UnsandboxedAgents)
		}
		fmt.Fprintf(stderr, "loadout sandbox: warning: running %s UNSANDBOXED, as the context allows (unsandboxedAgents: Allow): %v\n", argv[0], err)
		return sandbox.Exec(nil, argv, os.Environ())
	}
	return err
}

// SandboxCheck is the answer of `loadout sandbox --check`.
type SandboxCheck struct {
	// Declared: the context declares a sandbox.
	Declared bool `json:"declared"`
	// Enforceable: this kernel can hold a command to it.
	Enforceable bool `json:"enforceable"`
	// Runs: a command would run (enforced, nothing declared, or Allow).
	Runs bool `json:"runs"`
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int `json:"landlockABI"`
	// Reason says why it cannot be enforced.
	Reason  string            `json:"reason,omitempty"`
	Sandbox *contract.Sandbox `json:"sandbox,omitempty"`
}

func writeSandboxCheck(w io.Writer, s *contract.Sandbox) error {
	abi := sandbox.ABI()
	c := SandboxCheck{Declared: s != nil, LandlockABI: abi, Sandbox: s}
	err := sandbox.Check(s, abi)
	c.Enforceable = err == nil
	if err != nil {
		c.Reason = err.Error()
	}
	c.Runs = c.Enforceable || s.UnsandboxedAgents == contract.UnsandboxedAllow
	b, _ := json.MarshalIndent(c, "", "  ") // plain fields always marshal
	fmt.Fprintln(w, string(b))
	if !c.Runs {
		return fmt.Errorf("a command would not run: %s", c.Reason)
	}
	return nil
}
