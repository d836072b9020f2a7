package exthost

import (
	"errors"
	"fmt"
	"sync"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

const (
	eventBefore = vocab.BeforeToolCall
	eventAfter  = vocab.AfterToolResult
)

// API is everything an extension author can do while its factory runs. Calls
// only record into a private stage; nothing is visible to the host until the
// whole extension commits (rule R-EXT-2), and authors never see the stage or
// the commit (R-EXT-3). Calls after the factory has returned are ignored.
type API interface {
	// ExtensionID is the id the extension loads under.
	ExtensionID() string
	// Workspace is the Workspace the extension loads for.
	Workspace() WorkspaceInfo
	// RegisterTool adds a tool.
	RegisterTool(tool Tool)
	// On adds a before or after hook; hooks run in registration order.
	On(hook Hook)
	// RegisterMessageType declares a custom message type and whether messages
	// of that type enter the model's context (rule R-LC-2).
	RegisterMessageType(messageType string, inContext bool)
	// DeclareMessageType is RegisterMessageType with the type's template:
	// how a message of the type reads to the model.
	DeclareMessageType(t MessageTypeDecl)
	// SetPromptGuide sets the text appended to the system prompt's tools section.
	SetPromptGuide(text string)
}

type stagedMessageType struct {
	typ       string
	inContext bool
	template  string
}

// stage collects one extension's registrations during its factory.
type stage struct {
	id           string
	namespace    string
	imposed      bool
	tools        []Tool
	hooks        []Hook
	messageTypes []stagedMessageType
	promptGuide  string
}

// stagingAPI is the API handed to a factory. It is the only way into the
// stage, and sealing it after the factory returns stops an author who kept a
// reference from writing into a stage that is being committed.
type stagingAPI struct {
	mu        sync.Mutex
	sealed    bool
	stage     *stage
	workspace WorkspaceInfo
}

var _ API = (*stagingAPI)(nil)

func (a *stagingAPI) ExtensionID() string      { return a.stage.id }
func (a *stagingAPI) Workspace() WorkspaceInfo { return a.workspace }

func (a *stagingAPI) RegisterTool(tool Tool) {
	tool.InputSchema = cloneBytes(tool.InputSchema)
	tool.Service = cloneService(tool.Service)
	a.record(func(s *stage) { s.tools = append(s.tools, tool) })
}

func (a *stagingAPI) On(hook Hook) {
	hook.Tools = append([]string(nil), hook.Tools...)
	hook.Params = cloneParams(hook.Params)
	a.record(func(s *stage) { s.hooks = append(s.hooks, hook) })
}

func (a *stagingAPI) RegisterMessageType(messageType string, inContext bool) {
	a.DeclareMessageType(MessageTypeDecl{Type: messageType, InContext: inContext})
}

func (a *stagingAPI) DeclareMessageType(t MessageTypeDecl) {
	a.record(func(s *stage) {
		s.messageTypes = append(s.messageTypes, stagedMessageType{typ: t.Type, inContext: t.InContext, template: t.Template})
	})
}

func (a *stagingAPI) SetPromptGuide(text string) {
	a.record(func(s *stage) { s.promptGuide = text })
}

func (a *stagingAPI) record(f func(*stage)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sealed {
		f(a.stage)
	}
}

// seal ends the factory's write access and returns the stage.
func (a *stagingAPI) seal() *stage {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sealed = true
	return a.stage
}

// commitError is a failed commit check; Reason becomes the Outcome's reason.
type commitError struct {
	reason string
	msg    string
}

func (e *commitError) Error() string { return e.msg }

// check applies the commit checks of rule R-EXT-2 to a sealed stage against
// the current registry. It reads both and changes neither.
func (s *stage) check(r *registry) error {
	if r.isCommitted(s.id) {
		return &commitError{ReasonAlreadyLoaded, fmt.Sprintf("extension %q is already loaded", s.id)}
	}
	seen := map[string]bool{}
	for _, t := range s.tools {
		switch {
		case t.Name == "":
			return &commitError{ReasonInvalid, "a tool has an empty name"}
		case seen[t.Name]:
			return &commitError{ReasonDuplicateTool, fmt.Sprintf("tool %q is registered twice", t.Name)}
		case r.hasTool(t.Name):
			return &commitError{ReasonToolCollision, fmt.Sprintf("tool %q is already registered", t.Name)}
		case t.Service != nil && t.Service.URL == "":
			return &commitError{ReasonInvalid, fmt.Sprintf("tool %q has a service without a url", t.Name)}
		case t.MCP != nil && (t.MCP.URL == "" || t.MCP.Tool == ""):
			return &commitError{ReasonInvalid, fmt.Sprintf("tool %q has an MCP server without a url or a tool name", t.Name)}
		case t.MCP != nil && t.Service != nil:
			return &commitError{ReasonInvalid, fmt.Sprintf("tool %q has both a service and an MCP server", t.Name)}
		}
		seen[t.Name] = true
	}
	hooks := map[string]bool{}
	for _, h := range s.hooks {
		var err error
		switch {
		case h.Name == "":
			err = errors.New("a hook has an empty name")
		case hooks[h.Name]:
			err = fmt.Errorf("hook %q is registered twice", h.Name)
		case !knownEvent(h.Event):
			err = fmt.Errorf("hook %q has unknown event %q", h.Name, h.Event)
		case h.Handler == nil:
			err = fmt.Errorf("hook %q has no handler", h.Name)
		}
		if err != nil {
			return &commitError{ReasonInvalid, err.Error()}
		}
		hooks[h.Name] = true
	}
	types := map[string]bool{}
	for _, m := range s.messageTypes {
		if m.typ == "" || types[m.typ] {
			return &commitError{ReasonInvalid, fmt.Sprintf("message type %q is empty or declared twice", m.typ)}
		}
		if err := CheckMessageTemplate(m.template); err != nil {
			return &commitError{ReasonInvalid, fmt.Sprintf("message type %q: %v", m.typ, err)}
		}
		types[m.typ] = true
	}
	return nil
}
