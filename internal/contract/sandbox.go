package contract

import (
	"slices"
	"strings"
)

// Sandbox is the effective sandbox a context carries (Registry.Sandbox): the
// intersection of every declaration that applies to the Workspace
// (internal/sandboxpolicy), enforced below the agent by `loadout sandbox`
// and the agents' own sandboxes (docs/security.md, "Sandbox"). It is part
// of manifest.json, so the context hash and its signature cover it.
type Sandbox struct {
	// Filesystem, when set, lists every path the agent may use; nil leaves
	// the filesystem unrestricted.
	Filesystem *SandboxFilesystem `json:"filesystem,omitempty"`
	// Network, when set, lists the TCP ports the agent may connect to; nil
	// leaves the network unrestricted.
	Network *SandboxNetwork `json:"network,omitempty"`
	// UnsandboxedAgents is Refuse or Allow: whether an agent runs where the
	// sandbox cannot be applied.
	UnsandboxedAgents string `json:"unsandboxedAgents"`
	// AgentsUnderLoadoutSandbox: the platform starts every agent container
	// under `loadout sandbox`, so every agent is held whole (a platform
	// declaration's word only).
	AgentsUnderLoadoutSandbox bool `json:"agentsUnderLoadoutSandbox,omitempty"`
}

// SandboxFilesystem lists the paths of a Sandbox, sorted by path, one entry
// per path.
type SandboxFilesystem struct {
	Paths []SandboxPath `json:"paths"`
}

// SandboxPath grants Access (sorted: create, execute, read, remove, write)
// on Path and everything below it.
type SandboxPath struct {
	Path   string   `json:"path"`
	Access []string `json:"access"`
}

// SandboxNetwork lists the TCP ports (sorted) the agent may connect to on
// any host; empty, none. Hosts (sorted, each NAME:PORT or *.DOMAIN:PORT,
// lower case) are reachable by name through the egress proxy of `loadout
// sandbox` (internal/egress); empty, none.
type SandboxNetwork struct {
	ConnectPorts []int    `json:"connectPorts"`
	Hosts        []string `json:"hosts,omitempty"`
}

// Filesystem rights of a SandboxPath, as the API spells them.
const (
	AccessRead    = "read"
	AccessWrite   = "write"
	AccessCreate  = "create"
	AccessRemove  = "remove"
	AccessExecute = "execute"
)

// Values of Sandbox.UnsandboxedAgents.
const (
	UnsandboxedRefuse = "Refuse"
	UnsandboxedAllow  = "Allow"
)

// Within reports whether p is dir or below it (both clean absolute paths).
func Within(dir, p string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Rights returns the rights fs grants at p, sorted: the union of the rules
// on p and its ancestors, as Landlock grants them. A nil fs (filesystem not
// restricted) grants every right.
func (fs *SandboxFilesystem) Rights(p string) []string {
	if fs == nil {
		return []string{AccessCreate, AccessExecute, AccessRead, AccessRemove, AccessWrite}
	}
	var out []string
	for _, r := range fs.Paths {
		if Within(r.Path, p) {
			out = append(out, r.Access...)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
