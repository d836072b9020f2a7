package contract

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
// any host; empty, none.
type SandboxNetwork struct {
	ConnectPorts []int `json:"connectPorts"`
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
