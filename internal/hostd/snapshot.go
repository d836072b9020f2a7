package hostd

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/published"
)

// snapshot is one fully loaded context: what every request reads. It is never
// modified after load, so requests share it without locks.
//
// Its policy (host, tools) comes from the context alone and applies the
// moment the context loads. Its content may lag: external skills arrive as
// their sources are fetched, and each arrival makes a new snapshot with the
// same policy (Server.serve).
type snapshot struct {
	// published is the context as loaded, without external content.
	published *published.Context
	// context is published completed with the external skills that have
	// arrived (SkillSources.Serve): it serves activation and the
	// materialized tree. content reads its skills' files.
	context *published.Context
	content materialize.ContentSource
	host    *exthost.Host
	hash    string
	// tools are the runnable tools, by name, ready to run: schema compiled,
	// Service core built. runnable lists them in registry order.
	tools    map[string]*runnableTool
	runnable []contract.Tool
}

// loadSnapshot reads the context directory and rebuilds the hook runtime from
// its registry. An extension that does not load here (a CEL expression this
// build cannot compile) fails the whole load: serving without it would drop a
// policy the controller published, which is failing open.
//
// Nothing here touches the network: external skill sources are fetched
// afterwards, outside the reload lock (SkillSources.Fetch), so a source
// that never answers cannot hold back the policy of a new context.
//
// verify runs first: nothing of a context it refuses is used or fetched.
func loadSnapshot(ctx context.Context, dir string, verify func(*published.Context) error, client outbound.Doer, headers mcpclient.HeaderSource) (*snapshot, error) {
	pc, err := published.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if err := verify(pc); err != nil {
		return nil, err
	}
	m := pc.Manifest()
	ws := exthost.WorkspaceInfo{Name: m.Workspace.Name, Namespace: m.Workspace.Namespace}
	host, outcomes := exthost.NewHostFromRegistry(ctx, m.Registry, ws, client)
	var failed []string
	for _, o := range outcomes {
		if o.State != vocab.ExtensionLoaded {
			failed = append(failed, fmt.Sprintf("%s: %s: %s", o.Extension, o.Reason, o.Message))
		}
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("context %s: extensions did not load: %s", pc.Hash, strings.Join(failed, "; "))
	}
	snap := &snapshot{published: pc, context: pc, host: host, hash: pc.Hash}
	if err := snap.buildTools(ws, client, headers); err != nil {
		return nil, fmt.Errorf("context %s: %w", pc.Hash, err)
	}
	return snap, nil
}
