package hostd

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/mcpskills"
)

// hostd's MCP endpoint serves the Workspace's winning skills as the MCP
// skills extension specifies (internal/mcpskills); hostd decides which
// catalog is served and when: the served snapshot's, nothing before a
// context loads or while the policy is stale.

// registerMCPSkills adds the extension's methods and skill-file template.
func (s *Server) registerMCPSkills() error {
	read, err := mcpskills.Register(s.mcp.server, s.skillsServing)
	s.mcp.readSkillFile = read
	return err
}

// skillsServing is the catalog requests answer from, or the reason none is
// served: no context yet, or a stale policy (hostd then serves nothing).
func (s *Server) skillsServing() (*mcpskills.Catalog, error) {
	if err := s.policyRefused(); err != nil {
		return nil, err
	}
	cat := s.mcp.skills.Load()
	if cat == nil {
		return nil, errors.New("no context loaded yet")
	}
	return cat, nil
}

// syncMCPSkills brings the MCP server's skills to snap's: the catalog the
// methods answer from, each SKILL.md listed as a resource (clients get
// resources/list_changed when the set changes), and resources/updated for
// each subscribed file whose bytes changed. A skill whose external source
// has not arrived is left out until it does. The caller holds s.mu.
func (s *Server) syncMCPSkills(ctx context.Context, snap *snapshot) {
	var docs []contract.SkillDoc
	for _, doc := range snap.context.Skills() {
		if snap.context.Holds(doc.Name) {
			docs = append(docs, doc)
		}
	}
	cat, skipped := mcpskills.Build(ctx, docs, snap.content)
	for name, err := range skipped {
		if prev := s.mcp.skipped[name]; prev == nil || prev.Error() != err.Error() {
			s.opts.Logger.Error("Skill not served over MCP", "skill", name, "error", err)
		}
	}
	s.mcp.skipped = skipped
	old := s.mcp.skills.Swap(cat)
	n, listed := cat.Listed()
	syncListed(s.mcp.skillResources, n, func(i int) (string, string) {
		uri, r := listed(i)
		def, _ := json.Marshal(r)
		return uri, string(def)
	}, s.mcp.server.RemoveResources, func(i int) {
		_, r := listed(i)
		s.mcp.server.AddResource(r, s.mcp.readSkillFile)
	})
	if old == nil {
		return
	}
	for _, uri := range cat.Changed(old) {
		_ = s.mcp.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// subscribeSkill accepts subscriptions to the skill files hostd serves.
func (s *Server) subscribeSkill(_ context.Context, req *mcp.SubscribeRequest) error {
	cat := s.mcp.skills.Load()
	if cat == nil || !cat.Serves(req.Params.URI) {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}
