package exthost

import (
	"maps"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// registry is one immutable generation of what the host has committed. Commit
// builds a new registry and swaps it in whole, so executing calls read a
// consistent view without locks and never see half an extension.
type registry struct {
	tools     []contract.Tool
	toolIndex map[string]struct{}
	// byEvent holds each event's hooks in run order: the hooks of
	// extensions that are not imposed in registration order, then the
	// imposed (platform) ones in registration order, so the platform
	// judges last (docs/hooks.md, "Order").
	byEvent map[vocab.HookEvent][]boundHook
	hooks   []boundHook // every event, in registration order, for publishing
	// schemas are the compiled input schemas of the tools that have one:
	// a rewritten call is checked against its tool's schema.
	schemas      map[string]*InputSchema
	extensions   []string
	committed    map[string]struct{}
	messageTypes []contract.MessageType
	promptGuides []contract.PromptGuide
}

func newRegistry(builtin []contract.Tool) *registry {
	r := &registry{toolIndex: map[string]struct{}{}, committed: map[string]struct{}{},
		byEvent: map[vocab.HookEvent][]boundHook{}, schemas: map[string]*InputSchema{}}
	for _, t := range builtin {
		t.Builtin = true
		t.Extension = ""
		t.InputSchema = cloneBytes(t.InputSchema)
		t.Service = nil // built-in tools run in the agent
		r.tools = append(r.tools, t)
		r.toolIndex[t.Name] = struct{}{}
		r.addSchema(t.Name, t.InputSchema)
	}
	return r
}

func (r *registry) hasTool(name string) bool {
	_, ok := r.toolIndex[name]
	return ok
}

func (r *registry) isCommitted(id string) bool {
	_, ok := r.committed[id]
	return ok
}

// with returns a new registry holding r plus a checked stage. r is untouched.
func (r *registry) with(s *stage) *registry {
	n := &registry{
		tools:        slices.Clone(r.tools),
		toolIndex:    make(map[string]struct{}, len(r.toolIndex)+len(s.tools)),
		byEvent:      make(map[vocab.HookEvent][]boundHook, len(r.byEvent)),
		schemas:      maps.Clone(r.schemas),
		hooks:        slices.Clone(r.hooks),
		extensions:   append(slices.Clone(r.extensions), s.id),
		committed:    make(map[string]struct{}, len(r.committed)+1),
		messageTypes: slices.Clone(r.messageTypes),
		promptGuides: slices.Clone(r.promptGuides),
	}
	for k := range r.toolIndex {
		n.toolIndex[k] = struct{}{}
	}
	for e, hs := range r.byEvent {
		n.byEvent[e] = slices.Clone(hs)
	}
	for k := range r.committed {
		n.committed[k] = struct{}{}
	}
	n.committed[s.id] = struct{}{}
	for _, t := range s.tools {
		n.tools = append(n.tools, t.contract(s.id))
		n.toolIndex[t.Name] = struct{}{}
		n.addSchema(t.Name, t.InputSchema)
	}
	for _, h := range s.hooks {
		b := bind(s.id, s.namespace, s.imposed, h)
		n.hooks = append(n.hooks, b)
		n.byEvent[h.Event] = insertInRunOrder(n.byEvent[h.Event], b)
	}
	for _, m := range s.messageTypes {
		n.messageTypes = append(n.messageTypes, contract.MessageType{Extension: s.id, Type: m.typ, InContext: m.inContext, Template: m.template})
	}
	if s.promptGuide != "" {
		n.promptGuides = append(n.promptGuides, contract.PromptGuide{Extension: s.id, Text: s.promptGuide})
	}
	return n
}

// insertInRunOrder adds b to an event's hooks in run order: an imposed hook
// after every hook, any other hook before the first imposed one. Load order
// stays what it is (platform extensions commit first, so a project extension
// cannot take a platform id); only the order hooks run in puts the platform
// last.
func insertInRunOrder(hooks []boundHook, b boundHook) []boundHook {
	if b.imposed {
		return append(hooks, b)
	}
	i := slices.IndexFunc(hooks, func(x boundHook) bool { return x.imposed })
	if i < 0 {
		return append(hooks, b)
	}
	return slices.Insert(hooks, i, b)
}

// addSchema compiles a tool's input schema. Extension specs are checked
// before they commit, so a schema that does not compile here came from a
// Go factory; the tool then has none to recheck a rewrite against, and the
// hostd that runs it refuses to load it (buildTools).
func (r *registry) addSchema(tool string, raw []byte) {
	if len(raw) == 0 {
		return
	}
	if s, err := CompileInputSchema(raw); err == nil {
		r.schemas[tool] = s
	}
}

// snapshot renders the registry in its published form. Every list is non-nil
// so the JSON is the same bytes whether or not anything was registered.
func (r *registry) snapshot(deny []string, denied toolclass.Matcher) contract.Registry {
	out := contract.Registry{
		Tools:        make([]contract.Tool, 0, len(r.tools)),
		Hooks:        make([]contract.Hook, 0, len(r.hooks)),
		MessageTypes: append([]contract.MessageType{}, r.messageTypes...),
		PromptGuides: append([]contract.PromptGuide{}, r.promptGuides...),
		Extensions:   append([]string{}, r.extensions...),
		Deny:         append([]string{}, deny...),
	}
	// A denied tool is not one the agent may call, so it is not published as
	// one; the deny list travels beside the tools so hostd keeps enforcing it
	// (rule R-EXT-5).
	for _, t := range r.tools {
		if denied.Match(t.Name) {
			continue
		}
		t.InputSchema = cloneBytes(t.InputSchema)
		t.Service = cloneService(t.Service)
		out.Tools = append(out.Tools, t)
	}
	for _, h := range r.hooks {
		out.Hooks = append(out.Hooks, h.contract())
	}
	return out
}
