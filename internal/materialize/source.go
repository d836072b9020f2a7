package materialize

import (
	"context"

	"github.com/loadout-dev/loadout/internal/contract"
)

// SkillContent is what a skill's directory holds besides its frontmatter: the
// body of SKILL.md and the skill's other files.
type SkillContent struct {
	Body  string
	Files []File
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
// (skills.json), every file with mode 0644.
type InlineContent struct{}

// SkillContent implements ContentSource.
func (InlineContent) SkillContent(_ context.Context, s contract.SkillDoc) (SkillContent, error) {
	files := make([]File, 0, len(s.Files))
	for _, f := range s.Files {
		files = append(files, File{Path: f.Path, Content: []byte(f.Content), Mode: 0o644})
	}
	return SkillContent{Body: s.Body, Files: files}, nil
}
