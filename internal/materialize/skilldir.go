package materialize

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// SkillDir is one skill's directory as every agent gets it: SKILL.md first,
// then the skill's other files in path order, each path checked and each
// mode normalised. Build lays it out under skills/NAME; hostd serves the
// same files over MCP as skill:// resources, so the two never differ.
type SkillDir struct {
	// Content is what the source gave: the body the memory texts quote.
	Content SkillContent
	// Files are relative to the skill's directory, SKILL.md first.
	Files []File
}

// ReadSkillDir asks source for a skill's content and lays out its directory.
// SKILL.md is the source's own (an external artifact's, byte for byte) or
// rendered from the skill's frontmatter and body.
func ReadSkillDir(ctx context.Context, source ContentSource, s contract.SkillDoc) (SkillDir, error) {
	if err := checkName("skill", s.Name); err != nil {
		return SkillDir{}, err
	}
	content, err := source.SkillContent(ctx, s)
	if err != nil {
		return SkillDir{}, fmt.Errorf("skill %q: %w", s.Name, err)
	}
	md := content.SkillMD
	if md == nil {
		if md, err = skillMarkdown(s, content.Body); err != nil {
			return SkillDir{}, fmt.Errorf("skill %q: %w", s.Name, err)
		}
	}
	files := make([]File, 0, len(content.Files)+1)
	files = append(files, File{Path: SkillFile, Content: md, Mode: skillfile.ModeFile})
	rest := slices.Clone(content.Files)
	slices.SortFunc(rest, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range rest {
		if err := checkFilePath(f.Path); err != nil {
			return SkillDir{}, fmt.Errorf("skill %q: file %q: %w", s.Name, f.Path, err)
		}
		if f.Path == SkillFile {
			return SkillDir{}, fmt.Errorf("skill %q: file %q: collides with the SKILL.md written from the skill's body", s.Name, f.Path)
		}
		f.Mode = skillfile.ModeOf(uint32(f.Mode))
		files = append(files, f)
	}
	return SkillDir{Content: content, Files: files}, nil
}
