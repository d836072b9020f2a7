package hostd

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/sources"
)

// snapshot is one fully loaded context: what every request reads. It is never
// modified after load, so requests share it without locks.
type snapshot struct {
	context *resources.PublishedContext
	host    *exthost.Host
	hash    string
	// tools are the runnable tools, by name, ready to run: schema compiled,
	// Service core built. runnable lists them in registry order.
	tools    map[string]*runnableTool
	runnable []contract.Tool
	// fetched holds the trees of the external skills, for the materialized tree.
	fetched *sources.Fetched
}

// loadSnapshot reads the context directory and rebuilds the hook runtime from
// its registry. An extension that does not load here (a CEL expression this
// build cannot compile) fails the whole load: serving without it would drop a
// policy the controller published, which is failing open.
//
// External skills are fetched and verified here (through fetcher, once per
// digest): a source that fails fails the load, and the last good context and
// tree stay.
//
// verify runs first: nothing of a context it refuses is used or fetched.
func loadSnapshot(ctx context.Context, dir string, verify func(*resources.PublishedContext) error, client outbound.Doer, fetcher *sources.Fetcher) (*snapshot, error) {
	pc, err := resources.LoadContextDir(dir)
	if err != nil {
		return nil, err
	}
	if err := verify(pc); err != nil {
		return nil, err
	}
	fetched, err := fetcher.Complete(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("context %s: %w", pc.Hash, err)
	}
	pc = fetched.Context
	m := pc.Manifest()
	ws := exthost.WorkspaceInfo{Name: m.Workspace.Name, Namespace: m.Workspace.Namespace}
	host, outcomes := exthost.NewHostFromRegistry(ctx, m.Registry, ws, client)
	var failed []string
	for _, o := range outcomes {
		if o.State != v1alpha1.ExtensionLoaded {
			failed = append(failed, fmt.Sprintf("%s: %s: %s", o.Extension, o.Reason, o.Message))
		}
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("context %s: extensions did not load: %s", pc.Hash, strings.Join(failed, "; "))
	}
	snap := &snapshot{context: pc, host: host, hash: pc.Hash, fetched: fetched}
	if err := snap.buildTools(ws, client); err != nil {
		return nil, fmt.Errorf("context %s: %w", pc.Hash, err)
	}
	return snap, nil
}
