package sourcecache

import (
	"context"
	"errors"
	"fmt"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// Fetched is a context completed with its external skills: the context that
// serves activation and the system prompt, and each external skill's tree by
// skill name, for the materialized skill directory.
type Fetched struct {
	Context *published.Context
	Trees   map[string]skillpack.Tree
}

// Complete fetches every external skill of a published context and returns
// the completed context. The context's signer requirements hold for each
// (Requiring). Every source is tried; if any cannot be fetched or
// fails verification, the error names each one and nothing is returned, so
// the caller keeps serving its last good context and tree.
func (f *Fetcher) Complete(ctx context.Context, pc *published.Context) (*Fetched, error) {
	trees := map[string]skillpack.Tree{}
	content := map[string]resources.ExternalSkill{}
	var errs []error
	f = f.Requiring(pc.Manifest().SkillSigners)
	for _, s := range pc.Skills() {
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

// ExternalSkillsOf is ExternalSkillOf of each skill's tree, by skill name:
// what published.Context.WithAvailableExternal completes a context with.
func ExternalSkillsOf(trees map[string]skillpack.Tree) map[string]resources.ExternalSkill {
	out := make(map[string]resources.ExternalSkill, len(trees))
	for name, t := range trees {
		out[name] = ExternalSkillOf(t)
	}
	return out
}

// ExternalSkillOf splits a fetched tree into SKILL.md and the other files.
func ExternalSkillOf(t skillpack.Tree) resources.ExternalSkill {
	var ext resources.ExternalSkill
	for _, f := range t {
		if f.Path == "SKILL.md" {
			ext.SkillMD = f.Content
			continue
		}
		ext.Files = append(ext.Files, f)
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

// Content serves the materializer: external skills from the fetched trees,
// SKILL.md and every file byte for byte with their modes; inline skills from
// the context itself.
type Content struct {
	Trees map[string]skillpack.Tree
}

// SkillContent implements materialize.ContentSource.
func (c Content) SkillContent(ctx context.Context, s contract.SkillDoc) (materialize.SkillContent, error) {
	if s.Source == nil {
		return materialize.InlineContent{}.SkillContent(ctx, s)
	}
	tree, ok := c.Trees[s.Name]
	if !ok {
		return materialize.SkillContent{}, fmt.Errorf("source %s was not fetched", s.Source)
	}
	ext := ExternalSkillOf(tree)
	return materialize.SkillContent{SkillMD: ext.SkillMD, Files: ext.Files}, nil
}

// Materialize builds the materializer's input and options for a context
// completed by Complete.
func (f *Fetched) Materialize(opts materialize.Options) (materialize.Input, materialize.Options, error) {
	opts.Source = Content{Trees: f.Trees}
	in, err := materialize.InputFrom(f.Context)
	return in, opts, err
}
