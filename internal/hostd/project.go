package hostd

import (
	"strings"

	"github.com/loadout-dev/loadout/internal/materialize"
)

// projectContext is the Workspace's project content as the snapshot serves
// it (materialize.Memory.Project: the tenants' instructions, active skills
// and prompt guides, each under a heading naming its namespace and saying
// it is project content). Claude Code and Codex get it as SessionStart
// context, never in their managed memory. When it cannot be composed (a
// manifest from an older manager, without instruction ranges), the model is
// told so rather than left without a word.
func (s *snapshot) projectContext() string {
	m, err := materialize.MemoryOf(s.context)
	if err != nil {
		return "# Project content\n\nLoadout could not give this session the Workspace's project content: " + err.Error()
	}
	return strings.TrimRight(m.Project, "\n")
}
