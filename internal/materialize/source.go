package materialize

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/resources"
)

// SkillContent is what a skill's directory holds besides its frontmatter: the
// body of SKILL.md and the skill's other files.
type SkillContent struct {
	Body  string
	Files []File
	// SkillMD, when set, is written as SKILL.md byte for byte instead of a
	// SKILL.md rendered from the skill's frontmatter and Body: an external
	// source's own SKILL.md, so the materialized skill equals its source.
	SkillMD []byte
}

// ContentSource supplies a skill's body and files. The context carries them
// inline (InlineContent); a skill whose content lives in an external artifact
// (an OCI image or a git commit, pinned in the context) is served by a source
// that fetches and verifies that artifact instead. Build asks the source once
// per skill, so a source decides per skill where its content comes from.
type ContentSource interface {
	SkillContent(ctx context.Context, skill contract.SkillDoc) (SkillContent, error)
}

// InlineContent serves each skill's body and files from the context itself
// (skills.json): binary files decoded from base64, executable files with mode
// 0755 and the others 0644. A skill with an external source has no content
// here; see internal/sources.
type InlineContent struct{}

// SkillContent implements ContentSource.
func (InlineContent) SkillContent(_ context.Context, s contract.SkillDoc) (SkillContent, error) {
	if s.Source != nil {
		return SkillContent{}, fmt.Errorf("content comes from source %s, which is not fetched here", s.Source)
	}
	decoded, err := published.SkillFiles(s)
	if err != nil {
		return SkillContent{}, err
	}
	return SkillContent{Body: s.Body, Files: decoded}, nil
}

// MemoryOf is the memory texts (composeMemory) of a published context as it
// is served: each active skill activated from it, so an external skill's
// body is there once its source has arrived (until then its section says
// so, and the rest of the text is there). hostd gives Memory.Project to
// Claude Code and Codex as SessionStart context.
func MemoryOf(pc *published.Context) (Memory, error) {
	instructions, err := pc.Instructions()
	if err != nil {
		return Memory{}, err
	}
	m := pc.Manifest()
	active := slices.Clone(m.ActiveSkills)
	slices.SortFunc(active, func(a, b contract.ActiveSkill) int { return strings.Compare(a.Name, b.Name) })
	skills := make([]resources.ActivatedSkill, 0, len(active))
	for _, a := range active {
		s, err := pc.Activate(a.Name, a.Files)
		if err != nil {
			// An external skill whose source has not arrived: the rest of
			// the text is given, and the model is told what is missing.
			s = &resources.ActivatedSkill{Name: a.Name, Body: fmt.Sprintf("(Loadout cannot give this skill's content yet: %v)", err)}
		}
		skills = append(skills, *s)
	}
	return composeMemory(instructions, m, skills), nil
}
