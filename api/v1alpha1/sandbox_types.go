package v1alpha1

// Sandbox is what the kernel holds an agent to, whatever the agent types
// (docs/security.md, "Sandbox"): filesystem rights per path and TCP egress
// by port. A platform Extension imposed on a namespace declares it; a
// Workspace or a tenant's Extension can only narrow it. Several
// declarations combine by intersection: a right holds only where every
// declaration grants it.
type Sandbox struct {
	// filesystem lists the paths the agent may use and how. A path not
	// below any listed path cannot be read, written, created, removed or
	// executed. Unset, the filesystem is not restricted.
	// +optional
	Filesystem *SandboxFilesystem `json:"filesystem,omitempty"`

	// network restricts TCP connections by port. Unset, the network is not
	// restricted; set with no ports, the agent may connect nowhere.
	// +optional
	Network *SandboxNetwork `json:"network,omitempty"`

	// unsandboxedAgents says whether an agent may run where the sandbox
	// cannot be applied (a kernel without Landlock, an agent without a
	// sandbox): Refuse (the default) stops it with the reason, Allow runs it
	// unsandboxed and says so. A tenant can set Refuse over a platform's
	// Allow, never the reverse.
	// +optional
	UnsandboxedAgents UnsandboxedAgents `json:"unsandboxedAgents,omitempty"`

	// agentsUnderLoadoutSandbox says the platform starts every agent
	// container of the namespace under `loadout sandbox` (docs/agents.md,
	// "Sandbox"): the kernel then holds each agent whole, so an agent's own
	// sandbox (Claude Code's bubblewrap, which many pods cannot run) is a
	// second layer that may be unavailable, and hooks may rely on the
	// sandbox for every agent. Honoured on a platform declaration only: a
	// tenant cannot say how the platform starts its pods.
	// +optional
	AgentsUnderLoadoutSandbox bool `json:"agentsUnderLoadoutSandbox,omitempty"`
}

// SandboxFilesystem is the filesystem half of a Sandbox.
type SandboxFilesystem struct {
	// paths and the rights granted below each. Rights of nested paths add
	// up (a file under /work and /work/src has the rights of both).
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Paths []SandboxPath `json:"paths"`
}

// SandboxPath grants rights on a path and everything below it.
type SandboxPath struct {
	// path is absolute and clean (no '.', '..' or trailing '/' segments).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="self == '/' || !(self.endsWith('/') || self.contains('//') || self.contains('/./') || self.endsWith('/.') || self.contains('/../') || self.endsWith('/..'))",message="must be clean: no '.', '..', empty or trailing segments"
	Path string `json:"path"`

	// access granted below path: read (open files for reading, list
	// directories), write (open files for writing, truncate them), create
	// (make files, directories, links, sockets and fifos), remove (unlink
	// files, remove directories, and so rename anything away) and execute.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	Access []SandboxAccess `json:"access"`
}

// SandboxAccess is one filesystem right.
// +kubebuilder:validation:Enum=read;write;create;remove;execute
type SandboxAccess string

// Filesystem rights of a SandboxPath.
const (
	SandboxRead    SandboxAccess = "read"
	SandboxWrite   SandboxAccess = "write"
	SandboxCreate  SandboxAccess = "create"
	SandboxRemove  SandboxAccess = "remove"
	SandboxExecute SandboxAccess = "execute"
)

// SandboxNetwork is the network half of a Sandbox. The kernel checks TCP
// connect(2) by destination port (Landlock); it cannot tell hosts apart, so
// a port is allowed to every host.
type SandboxNetwork struct {
	// connectPorts are the TCP ports the agent may connect to, on any host.
	// Empty: no TCP connection at all.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	ConnectPorts []int32 `json:"connectPorts,omitempty"`

	// hosts the agent may reach by name through the egress proxy that
	// `loadout sandbox` starts beside the command (HTTPS_PROXY and
	// HTTP_PROXY point at it): NAME or NAME:PORT (port 443 when unset), and
	// *.DOMAIN for every name below DOMAIN. A connection through the proxy
	// to any other name or port is refused; direct connections stay
	// limited to connectPorts. Names are matched as the agent asks for
	// them, before resolution.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=260
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[0-9]{1,5})?$`
	Hosts []string `json:"hosts,omitempty"`
}

// UnsandboxedAgents is whether an agent may run without the sandbox.
// +kubebuilder:validation:Enum=Refuse;Allow
type UnsandboxedAgents string

const (
	// UnsandboxedRefuse stops an agent that cannot be sandboxed.
	UnsandboxedRefuse UnsandboxedAgents = "Refuse"
	// UnsandboxedAllow runs it unsandboxed, saying so.
	UnsandboxedAllow UnsandboxedAgents = "Allow"
)
