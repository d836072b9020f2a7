package materialize

import (
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// The context's declared sandbox (contract.Sandbox, docs/security.md
// "Sandbox") in the agents' own sandboxes. Each can express less than the
// declaration: where it cannot, the mapping grants less, never more, and
// the agent container runs under `loadout sandbox` for the rest
// (docs/agents.md, "Sandbox").

// claudeSandbox is managed-settings.json's sandbox for s, nil without one.
// Claude Code runs Bash under bubblewrap: enabled, no unsandboxed retry
// (allowUnsandboxedCommands: false), failing at start-up where bubblewrap
// cannot run unless the declaration allows unsandboxed agents. Its write
// right is all or nothing (write, create and delete), so a declared path
// is writable for Bash only where the declaration grants all three there
// (allowWrite), and one where it grants less is denied to Bash's writes
// (denyWrite, which also beats Claude Code's default write access to its
// working directory), unless a writable path lies below it. So "edit, never
// delete" holds for Bash; Claude Code's Edit and Write tools, which cannot
// delete, still edit there. Its network filter knows domains, not ports,
// so a declared network allows no domain but hostd's (hostdHost), which
// Claude Code's own hooks reach through the sandbox's proxy, and the
// declared hosts' names (claudeDomains); an undeclared network allows
// hostd's and asks for the rest, as Claude Code does.
func claudeSandbox(s *contract.Sandbox, hostdHost string) map[string]any {
	if s == nil {
		return nil
	}
	out := map[string]any{
		"enabled": true,
		// Where the platform starts every agent under `loadout sandbox`, the
		// kernel already holds Claude Code whole: its own sandbox is a
		// second layer, which many pods cannot run (no user namespaces).
		"failIfUnavailable":        s.UnsandboxedAgents != contract.UnsandboxedAllow && !s.AgentsUnderLoadoutSandbox,
		"allowUnsandboxedCommands": false,
		"autoAllowBashIfSandboxed": false,
	}
	if fs := s.Filesystem; fs != nil {
		writable, denied := []string{}, []string{}
		for _, p := range fs.Paths {
			if hasAll(fs.Rights(p.Path), contract.AccessWrite, contract.AccessCreate, contract.AccessRemove) {
				writable = append(writable, p.Path)
			}
		}
		for _, p := range fs.Paths {
			if !slices.Contains(writable, p.Path) && !slices.ContainsFunc(writable, func(w string) bool { return contract.Within(p.Path, w) }) {
				denied = append(denied, p.Path)
			}
		}
		out["filesystem"] = map[string]any{"allowWrite": writable, "denyWrite": denied}
	}
	domains := []string{hostdHost}
	if s.Network != nil {
		domains = append(domains, claudeDomains(s.Network.Hosts)...)
	}
	network := map[string]any{"allowedDomains": domains}
	if s.Network != nil {
		network["allowManagedDomainsOnly"] = true
	}
	out["network"] = network
	return out
}

// claudeDomains are the declared hosts' names (network.hosts, NAME:PORT or
// *.DOMAIN:PORT) as Claude Code's allowedDomains spell them: its filter
// knows names, not ports, so a host declared on one port is reachable on
// any through Claude Code's own sandbox (docs/agents.md, "Sandbox");
// `loadout sandbox` around it holds the port too.
func claudeDomains(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if i := strings.LastIndexByte(h, ':'); i > 0 {
			out = append(out, h[:i])
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// codexSandboxRequirements is what requirements.toml pins for s: the
// sandbox modes Codex may run in. danger-full-access is never among them;
// workspace-write only where the declaration lets the agent write and
// create somewhere. Codex's writable roots are its configuration's, not
// its requirements': `loadout sandbox` around Codex holds the declared
// paths (and the remove right, which workspace-write grants).
func codexSandboxRequirements(s *contract.Sandbox) string {
	if s == nil {
		return ""
	}
	modes := []string{"read-only"}
	if s.Filesystem == nil || slices.ContainsFunc(s.Filesystem.Paths, func(p contract.SandboxPath) bool {
		return hasAll(s.Filesystem.Rights(p.Path), contract.AccessWrite, contract.AccessCreate)
	}) {
		modes = append(modes, "workspace-write")
	}
	return "# The platform's sandbox (docs/security.md, \"Sandbox\"): never danger-full-access.\nallowed_sandbox_modes = [\"" +
		strings.Join(modes, "\", \"") + "\"]\n"
}

func hasAll(access []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(access, w) {
			return false
		}
	}
	return true
}
