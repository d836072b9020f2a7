package resources

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ActivatedSkill is a skill whose body (and requested files) this turn reads.
// Its JSON shape is hostd's /v1/activate answer.
type ActivatedSkill struct {
	Name  string          `json:"name"`
	Body  string          `json:"body"`
	Files []ActivatedFile `json:"files"`
	// Origin is the origin of the skill that was activated; the context builder
	// uses it to refuse activations that are not the catalog's winner (R-CTX-3).
	Origin string `json:"-"`
}

// ActivatedFile keeps the request as written and the resolved source (R-ACT-3).
type ActivatedFile struct {
	Request string `json:"request"`
	Source  string `json:"source"`
	Content string `json:"content"`
}

// Activate returns the winning skill of that logical name with its body and the
// requested files. Kubernetes object skills resolve files among their
// own files after the lexical check; directory skills are re-read through
// their Reader, which applies both containment checks. The result is a deep copy (R-ACT-5).
func (c *Catalog) Activate(name string, files []string) (*ActivatedSkill, error) {
	s, ok := c.skills[name]
	if !ok {
		return nil, &ActivationError{Skill: name, Message: "no such skill in the catalog"}
	}
	if s.Reader != nil {
		return activateRead(s, files)
	}
	if s.Source != nil {
		return activateExternal(s, files)
	}
	return ActivateFiles(s.Name, s.Body, s.Origin.String(), s.Files, files)
}

// dedupe keeps the first occurrence of each request, in order (R-ACT-3).
func dedupe(requests []string) []string {
	seen := make(map[string]bool, len(requests))
	out := make([]string, 0, len(requests))
	for _, r := range requests {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// ActivateFiles activates a skill whose files are held in memory (Kubernetes
// objects and published skills.json): the lexical check is the containment,
// since there is no file system to escape into. Source is the clean path.
func ActivateFiles(name, body, origin string, have []File, requests []string) (*ActivatedSkill, error) {
	byPath := make(map[string]File, len(have))
	for _, f := range have {
		byPath[f.Path] = f
	}
	out := &ActivatedSkill{Name: name, Body: body, Origin: origin, Files: []ActivatedFile{}}
	for _, req := range dedupe(requests) {
		clean, err := CleanRequest(req)
		if err != nil {
			return nil, &ActivationError{Skill: name, File: req, Message: "refused", Err: err}
		}
		f, ok := byPath[clean]
		if !ok {
			return nil, &ActivationError{Skill: name, File: req, Message: "the skill has no such file"}
		}
		if f.Binary {
			return nil, &ActivationError{Skill: name, File: req, Message: "binary file: agents read it from the materialized skill directory, not the prompt"}
		}
		content, err := f.Bytes() // a fetched skill's file is read from disk
		if err != nil {
			return nil, &ActivationError{Skill: name, File: req, Message: "read", Err: err}
		}
		out.Files = append(out.Files, ActivatedFile{Request: req, Source: clean, Content: string(content)})
	}
	return out, nil
}

// activateRead activates a skill the catalog does not hold, through its
// Reader: SKILL.md must still name the skill (rule R-ACT-2), and the reader
// applies both containment checks to every file (rule R-ACT-4). Source is
// what the reader resolved (the canonical path on disk).
func activateRead(s Skill, requests []string) (*ActivatedSkill, error) {
	fail := func(file, msg string, err error) error {
		return &ActivationError{Skill: s.Name, File: file, Message: msg, Err: err}
	}
	now, body, where, err := s.Reader.Current()
	if err != nil {
		return nil, fail("", "re-read SKILL.md", err)
	}
	if now != s.Name {
		return nil, fail("", fmt.Sprintf("the catalog is stale: %s now names skill %q", where, now), nil)
	}
	out := &ActivatedSkill{Name: s.Name, Body: body, Origin: s.Origin.String(), Files: []ActivatedFile{}}
	for _, req := range dedupe(requests) {
		src, content, err := s.Reader.ReadFile(req)
		if errors.Is(err, ErrRefused) {
			return nil, fail(req, "refused", err)
		}
		if err != nil {
			return nil, fail(req, "read", err)
		}
		if !utf8.Valid(content) {
			return nil, fail(req, "binary file: agents read it from the materialized skill directory, not the prompt", nil)
		}
		out.Files = append(out.Files, ActivatedFile{Request: req, Source: src, Content: string(content)})
	}
	return out, nil
}
