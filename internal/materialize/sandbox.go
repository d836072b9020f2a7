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
// right is all or nothing (write, create and delete), so only a path the
// declaration lets the agent write, create and remove in is writable for
// Bash; a path without remove stays read-only to Bash (Claude Code's Edit
// and Write tools, which cannot delete, still edit there). Its network
// filter knows domains, not ports, so a declared network allows no domain.
func claudeSandbox(s *contract.Sandbox) map[string]any {
	if s == nil {
		return nil
	}
	out := map[string]any{
		"enabled":                  true,
		"failIfUnavailable":        s.UnsandboxedAgents != contract.UnsandboxedAllow,
		"allowUnsandboxedCommands": false,
		"autoAllowBashIfSandboxed": false,
	}
	if s.Filesystem != nil {
		writable := []string{}
		for _, p := range s.Filesystem.Paths {
			if hasAll(p.Access, contract.AccessWrite, contract.AccessCreate, contract.AccessRemove) {
				writable = append(writable, p.Path)
			}
		}
		out["filesystem"] = map[string]any{"allowWrite": writable}
	}
	if s.Network != nil {
		out["network"] = map[string]any{"allowedDomains": []string{}, "allowManagedDomainsOnly": true}
	}
	return out
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
		return hasAll(p.Access, contract.AccessWrite, contract.AccessCreate)
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
