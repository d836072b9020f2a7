package controllers

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// EventSource is the component name on the Events the controllers record.
const EventSource = "loadout"

// Options configure the Loadout controllers. The manager's flags set them in
// cmd/manager; test and bench harnesses set the same fields, so every
// harness runs the controllers exactly as the manager wires them.
type Options struct {
	// Policy decides platform namespaces and trust.
	Policy workspace.Policy
	// Signer signs every published context; nil publishes unsigned ones
	// (tests that do not look at signatures).
	Signer *contextsig.Signer
	// Loader loads extensions; nil means workspace.HostLoader{}.
	Loader workspace.ExtensionLoader
	// APIReader reads past the cache; nil means the manager's. Fault tests
	// wrap it.
	APIReader client.Reader
	// ReconcileTimeout bounds one reconcile of a Workspace.
	ReconcileTimeout time.Duration
	// MaxConcurrentReconciles is the Workspace controller's worker count.
	MaxConcurrentReconciles int
	// PerWorkspaceMetrics labels the publish metrics by Workspace.
	PerWorkspaceMetrics bool
	// Shard is the slice of namespaces this process owns (internal/shard);
	// nil owns every namespace. The manager's cache and client are the
	// shard's (shard.Ownership.Configure); the controllers also skip
	// objects of platform namespaces another shard owns.
	Shard *shard.Ownership
	// MCP configures the discovery of Extensions' MCP servers' tools.
	MCP MCPDiscovery
	// PolicyGrace is how long a namespace's policy epoch keeps accepting
	// the platform policy it replaced; zero means DefaultPolicyGrace.
	PolicyGrace time.Duration
}

// Setup registers every Loadout controller with mgr: the Workspace
// controller with its indexes and watches, and the Skill, Template and
// Extension validation controllers. It returns the Workspace reconciler.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) (*WorkspaceReconciler, error) {
	reader := o.APIReader
	if reader == nil {
		reader = mgr.GetAPIReader()
	}
	reader, err := newInstructionsReader(ctx, mgr, o.Policy.PlatformNamespaces, reader)
	if err != nil {
		return nil, fmt.Errorf("setting up the platform instructions cache: %w", err)
	}
	ws := &WorkspaceReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               reader,
		Recorder:                mgr.GetEventRecorder(EventSource),
		Policy:                  o.Policy,
		Loader:                  o.Loader,
		Signer:                  o.Signer,
		ReconcileTimeout:        o.ReconcileTimeout,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		PerWorkspaceMetrics:     o.PerWorkspaceMetrics,
	}
	if err := ws.SetupWithManager(ctx, mgr); err != nil {
		return nil, fmt.Errorf("setting up the Workspace controller: %w", err)
	}
	if err := SetupValidationReconcilers(mgr, o.Policy, o.MCP, ownedBy(o.Shard)...); err != nil {
		return nil, fmt.Errorf("setting up the validation controllers: %w", err)
	}
	epoch := &PolicyEpochReconciler{Client: mgr.GetClient(), APIReader: reader, Policy: o.Policy, Loader: o.Loader, Signer: o.Signer, Grace: o.PolicyGrace,
		Shard: o.Shard}
	if err := epoch.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the policy epoch controller: %w", err)
	}
	pn := &PlatformNamespaceReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(EventSource), Policy: o.Policy}
	if err := pn.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the platform namespace check: %w", err)
	}
	return ws, nil
}
