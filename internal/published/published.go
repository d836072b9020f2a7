// Package published reads a published context as the agent side sees it: a
// mounted context ConfigMap, parsed and hash-checked, with template rendering,
// skill activation and external skill content spliced in. hostd, `loadout
// materialize` and the CLI's render and activate commands use it.
package published

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
)

// Context is a published context as an agent pod sees it: the four
// keys of the ConfigMap, parsed. It answers render and activate requests the
// same way the resolution engine does, without any Kubernetes access.
type Context struct {
	// SystemPrompt is system-prompt.md.
	SystemPrompt string
	// Hash is the verified context hash.
	Hash string
	// Signature is the manager's signature document (contract.KeySignature),
	// empty when the directory has none. LoadContextDir reads it; checking
	// it is the agent side's job (internal/contextsig).
	Signature []byte

	manifest  contract.Manifest
	skills    map[string]contract.SkillDoc
	templates map[string]contract.TemplateDoc
	// external holds the fetched content of external skills, set by
	// WithExternal.
	external map[string]externalContent
}

// externalContent is a fetched external skill, checked against its Skill.
type externalContent struct {
	body  string
	files []resources.File
}

// configMapDataDir is the symlink a ConfigMap volume points at its current
// snapshot with; the key files are symlinks through it. Reading through the
// resolved snapshot directory reads all keys from one snapshot even while the
// kubelet swaps in a new one.
const configMapDataDir = "..data"

// LoadDir reads a mounted context ConfigMap (or a plain directory with
// the four files) and verifies its hash, so a half-updated or hand-edited
// directory is refused rather than half used.
func LoadDir(dir string) (*Context, error) {
	base := dir
	if _, err := os.Lstat(filepath.Join(dir, configMapDataDir)); err == nil {
		if base, err = filepath.EvalSymlinks(filepath.Join(dir, configMapDataDir)); err != nil {
			return nil, fmt.Errorf("context dir %s: %w", dir, err)
		}
	}
	data := make(map[string]string, 4)
	for _, key := range []string{contract.KeySystemPrompt, contract.KeyManifest, contract.KeySkills, contract.KeyTemplates} {
		b, err := os.ReadFile(filepath.Join(base, key))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("context dir %s: missing key %s", dir, key)
		}
		if err != nil {
			return nil, fmt.Errorf("context dir %s: %w", dir, err)
		}
		data[key] = string(b)
	}
	pc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("context dir %s: %w", dir, err)
	}
	if pc.Signature, err = readSignature(filepath.Join(base, contract.KeySignature)); err != nil {
		return nil, fmt.Errorf("context dir %s: %w", dir, err)
	}
	return pc, nil
}

// maxSignatureBytes bounds the signature key read from disk; a real one is
// a few hundred bytes per signing key.
const maxSignatureBytes = 64 << 10

// readSignature reads the signature document, if there is one.
func readSignature(path string) ([]byte, error) {
	b, err := ReadFileBounded(path, maxSignatureBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// ReadFileBounded reads the file at path, refusing one over limit bytes
// without reading more than one byte past it: the agent side reads what a
// mounted ConfigMap or a cache holds, and a file there may be anything.
func ReadFileBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), limit)
	}
	return b, nil
}

// Parse parses published ConfigMap data and checks its hash.
func Parse(data map[string]string) (*Context, error) {
	pc := &Context{SystemPrompt: data[contract.KeySystemPrompt]}
	var skills contract.Skills
	var templates contract.Templates
	for key, v := range map[string]any{contract.KeyManifest: &pc.manifest, contract.KeySkills: &skills, contract.KeyTemplates: &templates} {
		if err := json.Unmarshal([]byte(data[key]), v); err != nil {
			return nil, fmt.Errorf("parse %s: %w", key, err)
		}
	}
	if got := resources.ContextHash(data); got != pc.manifest.Hash {
		return nil, fmt.Errorf("%s: hash is %q but the data hashes to %q: the context is inconsistent", contract.KeyManifest, pc.manifest.Hash, got)
	}
	pc.Hash = pc.manifest.Hash
	pc.skills = make(map[string]contract.SkillDoc, len(skills.Skills))
	for _, s := range skills.Skills {
		pc.skills[s.Name] = s
	}
	pc.templates = make(map[string]contract.TemplateDoc, len(templates.Templates))
	for _, t := range templates.Templates {
		pc.templates[t.Name] = t
	}
	return pc, nil
}

// Render renders a published template (rule R-TPL-3): its body, or for a
// command with steps the text of its render steps and the plan; tool steps
// are not run here (the result's note says so). An unknown template or a
// missing argument is a *resources.TemplateError.
func (c *Context) Render(name string, args map[string]string, at time.Time) (resources.RenderedCommand, error) {
	plan, err := c.Plan(name, args)
	if err != nil {
		return resources.RenderedCommand{}, err
	}
	return plan.Rendered(at), nil
}

// Plan fills a published template's command with args without running
// anything (R-TPL-5): each step with its arguments filled or its template
// rendered.
func (c *Context) Plan(name string, args map[string]string) (resources.Plan, error) {
	t, ok := c.templates[name]
	if !ok {
		return resources.Plan{}, &resources.TemplateError{Template: name, Message: "no such template in the context"}
	}
	return resources.PlanCommand(name, t.Body, t.Steps, func(n string) (string, bool) {
		w, ok := c.templates[n]
		return w.Body, ok
	}, args)
}

// Activate activates a published skill with some of its files. The
// files live in skills.json, so the lexical containment check applies; the
// result shares nothing with the context (R-ACT-5).
func (c *Context) Activate(name string, files []string) (*resources.ActivatedSkill, error) {
	s, ok := c.skills[name]
	if !ok {
		return nil, &resources.ActivationError{Skill: name, Message: "no such skill in the context"}
	}
	if s.Source != nil {
		ext, ok := c.external[name]
		if !ok {
			return nil, &resources.ActivationError{Skill: name, Message: fmt.Sprintf("external source %s is not fetched yet", s.Source)}
		}
		return resources.ActivateFiles(s.Name, ext.body, s.Origin, ext.files, files)
	}
	have := make([]resources.File, 0, len(s.Files))
	for _, d := range s.Files {
		f, err := resources.FileFromDoc(d)
		if err != nil {
			return nil, &resources.ActivationError{Skill: name, File: d.Path, Message: "undecodable", Err: err}
		}
		have = append(have, f)
	}
	return resources.ActivateFiles(s.Name, s.Body, s.Origin, have, files)
}

// Holds reports whether the context holds a skill's content: an inline
// skill always, an external one once WithAvailableExternal (or
// WithExternal) completed the context with it. What the context does not
// hold is left out of the materialized tree and the MCP skills until it
// arrives.
func (c *Context) Holds(name string) bool {
	s, ok := c.skills[name]
	if !ok {
		return false
	}
	if s.Source == nil {
		return true
	}
	_, ok = c.external[name]
	return ok
}

// SkillFiles decodes a published inline skill's files (base64 ones to their
// bytes). External skills have none here: their files come from the source.
func SkillFiles(d contract.SkillDoc) ([]resources.File, error) {
	out := make([]resources.File, 0, len(d.Files))
	for _, fd := range d.Files {
		f, err := resources.FileFromDoc(fd)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", d.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// WithExternal returns a copy of the context completed with the fetched
// content of its external skills (keyed by skill name): each SKILL.md must
// agree with its Skill's name and description, and the markers of activated
// external skills in the system prompt are replaced by their bodies and
// requested files. Any external skill without content, a disagreeing
// SKILL.md or a requested file the source lacks is an error naming the skill,
// and the caller keeps what it served before.
func (c *Context) WithExternal(got map[string]resources.ExternalSkill) (*Context, error) {
	out, rejected := c.WithAvailableExternal(got)
	for _, s := range c.Skills() {
		if s.Source == nil {
			continue
		}
		if err := rejected[s.Name]; err != nil {
			return nil, err
		}
		if _, ok := out.external[s.Name]; !ok {
			return nil, fmt.Errorf("skill %s: external source %s was not fetched", s.Name, s.Source)
		}
	}
	return out, nil
}

// WithAvailableExternal is WithExternal for a reader that serves a context
// before all of its sources have arrived (hostd, whose policy must not wait
// on a registry). An external skill missing from got stays pending: Activate
// says it is not fetched yet and its markers stay in the system prompt. One
// whose content WithExternal would refuse stays pending too, its error in
// rejected. Skills complete independently: one pending skill delays no
// other.
func (c *Context) WithAvailableExternal(got map[string]resources.ExternalSkill) (out *Context, rejected map[string]error) {
	cp := *c
	out, rejected = &cp, map[string]error{}
	out.external = make(map[string]externalContent, len(got))
	for _, s := range c.Skills() {
		ext, ok := got[s.Name]
		if s.Source == nil || !ok {
			continue
		}
		body, err := resources.CheckExternal(s.Name, s.Description, ext.SkillMD)
		if err != nil {
			rejected[s.Name] = fmt.Errorf("skill %s: source %s: %w", s.Name, s.Source, err)
			continue
		}
		out.external[s.Name] = externalContent{body: body, files: ext.Files}
	}
	for _, a := range c.manifest.ActiveSkills {
		ext, ok := out.external[a.Name]
		if !ok {
			continue
		}
		prompt, err := spliceActive(out.SystemPrompt, a, ext)
		if err != nil {
			delete(out.external, a.Name)
			rejected[a.Name] = err
			continue
		}
		out.SystemPrompt = prompt
	}
	return out, rejected
}

// spliceActive replaces the markers of an active external skill in prompt
// with its body and requested files.
func spliceActive(prompt string, a contract.ActiveSkill, ext externalContent) (string, error) {
	prompt, ok := resources.SpliceMarker(prompt, resources.BodyMarker(a.Name), ext.body)
	if !ok {
		return "", fmt.Errorf("skill %s: system prompt has no place for its body", a.Name)
	}
	activated, err := resources.ActivateFiles(a.Name, ext.body, "", ext.files, a.Files)
	if err != nil {
		return "", err
	}
	for _, f := range activated.Files {
		if prompt, ok = resources.SpliceMarker(prompt, resources.FileMarker(a.Name, f.Source), f.Content); !ok {
			return "", fmt.Errorf("skill %s: system prompt has no place for file %s", a.Name, f.Request)
		}
	}
	return prompt, nil
}

// Manifest returns manifest.json. Its lists are copies: changing them does not
// change the context.
func (c *Context) Manifest() contract.Manifest {
	m := c.manifest
	m.Instructions = slices.Clone(m.Instructions)
	m.Catalog = slices.Clone(m.Catalog)
	m.Shadowed = slices.Clone(m.Shadowed)
	m.ActiveSkills = slices.Clone(m.ActiveSkills)
	m.Templates = slices.Clone(m.Templates)
	m.Commands = slices.Clone(m.Commands)
	m.Tools = slices.Clone(m.Tools)
	m.Hooks = slices.Clone(m.Hooks)
	m.MessageTypes = slices.Clone(m.MessageTypes)
	m.PromptGuides = slices.Clone(m.PromptGuides)
	m.SkillSigners = slices.Clone(m.SkillSigners)
	return m
}

// Skills returns skills.json's winning skills in name order. The slice is a
// copy; the docs share their file lists with the context and must not be
// changed.
func (c *Context) Skills() []contract.SkillDoc { return valuesInKeyOrder(c.skills) }

// Templates returns templates.json's winning templates in name order, as
// Skills does.
func (c *Context) Templates() []contract.TemplateDoc {
	return valuesInKeyOrder(c.templates)
}

// valuesInKeyOrder lists a map's values in the order of their keys (the
// skill and template maps are keyed by name).
func valuesInKeyOrder[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// Instruction is one instruction of the context: its body, sliced out of
// system-prompt.md, and where it came from.
type Instruction struct {
	Body   string
	Source contract.InstructionSource
}

// Instructions returns every instruction in the Workspace's order, each
// body sliced out of system-prompt.md by the byte range manifest.json gives
// it (contract.InstructionSource), with its provenance. Nothing is derived
// from the rest of the prompt: a range outside the instructions at the head
// of the prompt, or a manifest without ranges, is an error.
func (c *Context) Instructions() ([]Instruction, error) {
	head, err := c.instructionsHead()
	if err != nil {
		return nil, err
	}
	if len(c.manifest.InstructionSources) != len(c.manifest.Instructions) {
		return nil, fmt.Errorf("%s lists %d instructions but gives %d instructionSources: it was published by an older manager, which does not say where each instruction is", contract.KeyManifest, len(c.manifest.Instructions), len(c.manifest.InstructionSources))
	}
	out := make([]Instruction, 0, len(c.manifest.InstructionSources))
	for i, src := range c.manifest.InstructionSources {
		body, ok := src.Slice(head)
		if !ok {
			return nil, fmt.Errorf("%s: instructionSources[%d] (%s): bytes %d+%d are not inside the %d bytes of instructions", contract.KeyManifest, i, src.Origin, src.Offset, src.Length, len(head))
		}
		out = append(out, Instruction{Body: body, Source: src})
	}
	return out, nil
}

// InstructionsText returns the instruction bodies at the head of
// system-prompt.md, joined by blank lines, as the Workspace lists them: the
// first instructionsLength bytes of the prompt (manifest.json).
func (c *Context) InstructionsText() (string, error) {
	return c.instructionsHead()
}

// instructionsHead is the first instructionsLength bytes of the prompt,
// checked to end where a part of the prompt ends.
func (c *Context) instructionsHead() (string, error) {
	n := c.manifest.InstructionsLength
	if n < 0 || (n > 0 && (n >= len(c.SystemPrompt) || c.SystemPrompt[n] != '\n')) {
		return "", fmt.Errorf("%s: instructionsLength %d does not end a part of the %d-byte %s", contract.KeyManifest, n, len(c.SystemPrompt), contract.KeySystemPrompt)
	}
	return c.SystemPrompt[:n], nil
}
