package exthost

import (
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// registry is one immutable generation of what the host has committed. Commit
// builds a new registry and swaps it in whole, so executing calls read a
// consistent view without locks and never see half an extension.
type registry struct {
	tools        []contract.Tool
	toolIndex    map[string]struct{}
	before       []boundHook
	after        []boundHook
	hooks        []boundHook // both events, in registration order, for publishing
	extensions   []string
	committed    map[string]struct{}
	messageTypes []contract.MessageType
	promptGuides []contract.PromptGuide
}

func newRegistry(builtin []contract.Tool) *registry {
	r := &registry{toolIndex: map[string]struct{}{}, committed: map[string]struct{}{}}
	for _, t := range builtin {
		t.Builtin = true
		t.Extension = ""
		t.InputSchema = cloneBytes(t.InputSchema)
		t.Service = nil // built-in tools run in the agent
		r.tools = append(r.tools, t)
		r.toolIndex[t.Name] = struct{}{}
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
		before:       slices.Clone(r.before),
		after:        slices.Clone(r.after),
		hooks:        slices.Clone(r.hooks),
		extensions:   append(slices.Clone(r.extensions), s.id),
		committed:    make(map[string]struct{}, len(r.committed)+1),
		messageTypes: slices.Clone(r.messageTypes),
		promptGuides: slices.Clone(r.promptGuides),
	}
	for k := range r.toolIndex {
		n.toolIndex[k] = struct{}{}
	}
	for k := range r.committed {
		n.committed[k] = struct{}{}
	}
	n.committed[s.id] = struct{}{}
	for _, t := range s.tools {
		n.tools = append(n.tools, t.contract(s.id))
		n.toolIndex[t.Name] = struct{}{}
	}
	for _, h := range s.hooks {
		b := bind(s.id, h)
		n.hooks = append(n.hooks, b)
		if h.Event == eventBefore {
			n.before = append(n.before, b)
		} else {
			n.after = append(n.after, b)
		}
	}
	for _, m := range s.messageTypes {
		n.messageTypes = append(n.messageTypes, contract.MessageType{Extension: s.id, Type: m.typ, InContext: m.inContext})
	}
	if s.promptGuide != "" {
		n.promptGuides = append(n.promptGuides, contract.PromptGuide{Extension: s.id, Text: s.promptGuide})
	}
	return n
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
