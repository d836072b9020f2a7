package workspace

import (
	"context"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// ExtensionLoader loads a plan's extensions into a tool registry. The
// controller takes it as an interface so tests can count what is contacted.
// A loader may keep on plan.Extensions what it prepared
// (Candidate.Prepared), and commits a candidate that carries it rather
// than import it again.
type ExtensionLoader interface {
	// at is the Workspace (or, for the platform's policy alone, just the
	// namespace) the extensions load for.
	LoadExtensions(ctx context.Context, at contract.WorkspaceRef, plan *Plan) (contract.Registry, []exthost.Outcome)
}

// HostLoader loads extensions through internal/exthost: trust, import,
// factory, commit, one extension at a time in the plan's order.
type HostLoader struct {
	// Outbound fetches service-backed manifests; nil uses exthost's default
	// outbound.Client.
	Outbound outbound.Doer
	// Resolve turns Service references into URLs; nil uses extobject.DefaultResolver.
	Resolve extobject.WebhookResolver
}

// LoadExtensions implements ExtensionLoader. A candidate that comes
// prepared (Candidate.Prepared: an imposed extension, prepared once for
// the platform's policy) is only committed; every other one is prepared
// here and the plan's candidate keeps it. So a Workspace's pass commits the
// platform's extensions in the Workspace's own load order, against its own
// built-in tools, as a load of everything would, but imports and builds
// only what its roots bring.
func (l HostLoader) LoadExtensions(ctx context.Context, at contract.WorkspaceRef, plan *Plan) (contract.Registry, []exthost.Outcome) {
	host := exthost.NewHost(exthost.Options{
		Builtin: plan.Builtin,
		Deny:    plan.Deny,
		Workspace: exthost.WorkspaceInfo{Name: at.Name, Namespace: at.Namespace, Sandboxed: exthost.SandboxHolds(plan.Sandbox),
			EveryAgentSandboxed: exthost.SandboxHolds(plan.Sandbox) && plan.Sandbox.AgentsUnderLoadoutSandbox},
		Outbound: l.Outbound,
	})
	outcomes := make([]exthost.Outcome, 0, len(plan.Extensions))
	for i := range plan.Extensions {
		c := &plan.Extensions[i]
		if c.Prepared == nil {
			src := extobject.FromObjectIn(c.Extension, l.Resolve, c.Platform)
			// An imposed platform extension's hooks run after the tenant's
			// (docs/hooks.md, "Order").
			src.Imposed = c.Enforced
			p := host.Prepare(ctx, withParams(src, *c), c.Trusted)
			c.Prepared = &p
		}
		outcomes = append(outcomes, host.Commit(*c.Prepared))
	}
	return host.Registry(), outcomes
}
