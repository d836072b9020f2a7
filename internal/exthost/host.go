package exthost

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// Options configure a Host.
type Options struct {
	// Builtin are the agent's own tools. They come first in the registry and
	// no extension may take their names.
	Builtin []contract.Tool
	// Deny lists tools the Workspace denies, whoever registered them: names
	// or classes, compared case-insensitively (package toolclass).
	Deny []string
	// Workspace is what hooks see as `workspace`.
	Workspace WorkspaceInfo
	// Outbound calls webhooks and fetches service-backed manifests. Nil
	// means a default outbound.Client (no redirects, a deadline per call).
	Outbound outbound.Doer
}

// Host holds one Workspace's extensions and runs their hooks. Load is
// serialised; Execute, Before and After may run concurrently with each other
// and with Load, and always see a whole number of committed extensions.
type Host struct {
	workspace WorkspaceInfo
	deny      toolclass.Matcher
	denyList  []string
	client    outbound.Doer

	loadMu sync.Mutex // serialises check+commit
	reg    atomic.Pointer[registry]
}

// NewHost returns a Host that knows only the built-in tools.
func NewHost(opts Options) *Host {
	h := &Host{
		workspace: opts.Workspace,
		deny:      toolclass.NewMatcher(opts.Deny),
		client:    opts.Outbound,
	}
	if h.client == nil {
		h.client = defaultOutbound
	}
	h.denyList = slices.Compact(slices.Sorted(slices.Values(opts.Deny)))
	h.reg.Store(newRegistry(opts.Builtin))
	return h
}

// Registry is a deterministic snapshot of the committed registry in
// registration order, built-in tools first; it is what manifest.json publishes.
func (h *Host) Registry() contract.Registry {
	return h.reg.Load().snapshot(h.denyList, h.deny)
}

// Workspace is the Workspace the host runs hooks for.
func (h *Host) Workspace() WorkspaceInfo { return h.workspace }

// Denies reports whether the Workspace's deny list refuses tool.
func (h *Host) Denies(tool string) bool { return h.denied(tool) }

// denied reports whether the deny list names tool or a class it belongs to,
// in any case (toolclass.Matcher): agents disagree on case for the same tool
// (Claude Code's Bash, Pi's bash), and deny [shell] holds for every agent's
// shell. Registered tool names stay case-sensitive: only policy folds.
func (h *Host) denied(tool string) bool { return h.deny.Match(tool) }
