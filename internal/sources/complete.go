package sources

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// Fetched is a context completed with its external skills: the context that
// serves activation and the system prompt, and each external skill's tree by
// skill name, for the materialized skill directory.
type Fetched struct {
	Context *resources.PublishedContext
	Trees   map[string]skillpack.Tree
}

// Complete fetches every external skill of a published context and returns
// the completed context. Every source is tried; if any cannot be fetched or
// fails verification, the error names each one and nothing is returned, so
// the caller keeps serving its last good context and tree.
func (f *Fetcher) Complete(ctx context.Context, pc *resources.PublishedContext) (*Fetched, error) {
	trees := map[string]skillpack.Tree{}
	content := map[string]resources.ExternalSkill{}
	var errs []error
	for _, s := range pc.SkillDocs() {
		if s.Source == nil {
			continue
		}
		tree, err := f.Fetch(ctx, *s.Source)
		if err != nil {
			errs = append(errs, fmt.Errorf("skill %s: %w", s.Name, err))
			continue
		}
		trees[s.Name] = tree
		content[s.Name] = ExternalSkillOf(tree)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, &Error{Err: err, Failed: len(errs)}
	}
	full, err := pc.WithExternal(content)
	if err != nil {
		return nil, &Error{Err: err, Failed: 1}
	}
	return &Fetched{Context: full, Trees: trees}, nil
}

// ExternalSkillOf splits a fetched tree into SKILL.md and the other files.
func ExternalSkillOf(t skillpack.Tree) resources.ExternalSkill {
	var ext resources.ExternalSkill
	for _, f := range t {
		if f.Path == "SKILL.md" {
			ext.SkillMD = f.Data
			continue
		}
		ext.Files = append(ext.Files, resources.File{
			Path: f.Path, Content: string(f.Data),
			Binary: !utf8.Valid(f.Data), Executable: f.Mode == skillpack.ModeExecutable,
		})
	}
	return ext
}

// Error is a failure to complete a context: Failed sources could not be
// fetched or verified. hostd reports it in /readyz and its metrics.
type Error struct {
	Err    error
	Failed int
}

func (e *Error) Error() string { return "external skill sources: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
