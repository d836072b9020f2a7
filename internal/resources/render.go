package resources

import (
	"errors"
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Input is everything one Workspace's context is resolved from.
type Input struct {
	Workspace contract.WorkspaceRef
	// Roots are ordered; on a name collision the first wins (R-CAT-1).
	Roots []Root
	// Instructions are the Workspace's own instructions, in order. They come
	// before the roots' instructions (AGENTS.md of directory roots), which
	// follow in root order: the Workspace is the most specific statement of
	// its rules, and neither shadows the other.
	Instructions []Instruction
	// Activate lists the skills whose bodies enter the context.
	Activate []Activation
	// Registry is the tool registry (built-in tools and loaded extensions); it
	// becomes the tools section of system-prompt.md (R-CTX-5) and the registry
	// part of manifest.json.
	Registry contract.Registry
	// MaxContextBytes is the budget of the published data; 0 means unlimited.
	MaxContextBytes int64
	// PlatformNamespaces are the namespaces whose text has the platform's
	// authority (contract.Provenance); any other text is project content.
	PlatformNamespaces []string
	// ExtensionNamespaces maps the id of each extension in Registry to its
	// namespace, which decides the authority of its prompt guide.
	ExtensionNamespaces map[string]string
	// PlatformPolicy is the digest of the platform policy in Registry
	// (workspace.PlatformPolicyDigest), written to the manifest; empty for
	// a context that carries none (deny-all).
	PlatformPolicy string
}

// Result is the published ConfigMap data and what it was made from.
type Result struct {
	// Data has the four keys of the contract.
	Data map[string]string
	// Hash is ContextHash(Data), also in manifest.json.
	Hash string
	// Bytes is DataBytes(Data), the size the budget is checked against.
	Bytes    int64
	Manifest contract.Manifest
	Catalog  *Catalog
}

// Render resolves the roots, activates the requested skills, builds the
// context text and encodes the ConfigMap data of the contract
// (docs/context-contract.md): same input, same bytes, same hash. Over budget it
// returns a *TooLargeError and no data, so nothing partial is ever published.
func Render(in Input) (*Result, error) {
	cat, err := BuildCatalog(in.Roots)
	if err != nil {
		return nil, err
	}
	active := make([]ActivatedSkill, 0, len(in.Activate))
	for _, a := range in.Activate {
		if slices.ContainsFunc(active, func(s ActivatedSkill) bool { return s.Name == a.Skill }) {
			return nil, &ActivationError{Skill: a.Skill, Message: "activated twice"}
		}
		s, err := cat.Activate(a.Skill, a.Files)
		if err != nil {
			return nil, err
		}
		active = append(active, *s)
	}
	instructions := append(slices.Clone(in.Instructions), cat.instructions...)
	if in.MaxContextBytes > 0 {
		if n := minDataBytes(cat, instructions); n > in.MaxContextBytes {
			return nil, &TooLargeError{Bytes: n, Max: in.MaxContextBytes, AtLeast: true}
		}
	}
	reg, err := normalizeRegistry(in.Registry)
	if err != nil {
		return nil, err
	}
	guideProvenance(reg, in.ExtensionNamespaces, in.PlatformNamespaces)
	hookProvenance(reg, in.ExtensionNamespaces)
	if err := checkStepTargets(cat, reg); err != nil {
		return nil, err
	}
	prompt, err := BuildContext(instructions, cat, active, reg)
	if err != nil {
		return nil, err
	}
	m := buildManifest(in.Workspace, instructions, cat, active, reg, in.PlatformNamespaces)
	m.PlatformPolicy = in.PlatformPolicy
	data, err := encodeData(prompt, m, cat, in.MaxContextBytes)
	if err != nil {
		return nil, err
	}
	hash := ContextHash(data)
	m.Hash = hash
	if data[contract.KeyManifest], err = encodeJSON(m, indentOf(contract.KeyManifest)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", contract.KeyManifest, err)
	}
	bytes := DataBytes(data)
	if in.MaxContextBytes > 0 && bytes > in.MaxContextBytes {
		return nil, &TooLargeError{Bytes: bytes, Max: in.MaxContextBytes}
	}
	return &Result{Data: data, Hash: hash, Bytes: bytes, Manifest: m, Catalog: cat}, nil
}

// indentOf is the JSON indentation of a published key: manifest.json is read
// by people (kubectl get -o yaml shows it as a block), skills.json and
// templates.json carry every body for programs and are compact: indenting
// them made a 500-skill reconcile 1.5× slower (BenchmarkReconcilePass).
func indentOf(key string) string {
	if key == contract.KeyManifest {
		return "  "
	}
	return ""
}

// encodeData encodes the four keys, manifest.json with an empty hash. With a
// budget (budget > 0) the bodies (skills.json, templates.json) are encoded one
// item at a time and the first item that does not fit stops everything with
// a *TooLargeError, so no more than the budget is ever held.
func encodeData(prompt string, m contract.Manifest, cat *Catalog, budget int64) (map[string]string, error) {
	tooLarge := func() error { return &TooLargeError{Bytes: budget + 1, Max: budget, AtLeast: true} }
	left := int64(-1) // unlimited
	if budget > 0 {
		if left = budget - int64(len(contract.KeySystemPrompt)+len(prompt)); left < 0 {
			return nil, tooLarge()
		}
	}
	data := map[string]string{contract.KeySystemPrompt: prompt}
	skills, templates := cat.Skills(), cat.Templates()
	lists := []struct {
		key, field string
		n          int
		item       func(i int) any
	}{
		{contract.KeySkills, "skills", len(skills), func(i int) any { return skillDoc(skills[i]) }},
		{contract.KeyTemplates, "templates", len(templates), func(i int) any { return templateDoc(templates[i], cat) }},
	}
	for _, l := range lists {
		w := &budgetWriter{max: -1}
		if left >= 0 {
			w.max = max(0, left-int64(len(l.key)))
		}
		if err := encodeListWithin(w, l.field, l.n, l.item); errors.Is(err, errOverBudget) {
			return nil, tooLarge()
		} else if err != nil {
			return nil, fmt.Errorf("encode %s: %w", l.key, err)
		}
		data[l.key] = w.String()
		if left >= 0 {
			left -= int64(len(l.key)) + w.Len()
		}
	}
	s, err := encodeJSON(m, indentOf(contract.KeyManifest))
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", contract.KeyManifest, err)
	}
	data[contract.KeyManifest] = s
	return data, nil
}

// normalizeRegistry returns a copy of the registry with every list non-nil
// (so JSON shows [] rather than null) and every input schema in canonical key
// order. The caller's registry is not modified.
func normalizeRegistry(r contract.Registry) (contract.Registry, error) {
	out := contract.Registry{
		Tools:        make([]contract.Tool, len(r.Tools)),
		Hooks:        nonNil(r.Hooks),
		MessageTypes: nonNil(r.MessageTypes),
		PromptGuides: nonNil(r.PromptGuides),
		Extensions:   slices.Clone(r.Extensions),
		Deny:         slices.Clone(r.Deny),
		Sandbox:      r.Sandbox,
		SkillSigners: slices.Clone(r.SkillSigners),
	}
	for i, t := range r.Tools {
		schema, err := canonicalJSON(t.InputSchema)
		if err != nil {
			return contract.Registry{}, &InvalidResourceError{Kind: "tool", Origin: Origin{Root: t.Extension, Object: t.Name}, Field: "inputSchema", Message: err.Error()}
		}
		t.InputSchema = schema
		out.Tools[i] = t
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}
