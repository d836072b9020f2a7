package exthost

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Turn is the payload of TurnStart and TurnEnd; CEL sees it as `turn`.
type Turn struct {
	// Index counts the turns of the agent's work on one prompt, from 0.
	Index int `json:"index"`
	// Text is the model's text of the turn (TurnEnd); ToolCalls the number
	// of tool calls it asked for.
	Text      string `json:"text,omitempty"`
	ToolCalls int    `json:"toolCalls,omitempty"`
}

// ModelInfo names the model of BeforeModelRequest and AfterModelResponse;
// CEL sees it as `model`.
type ModelInfo struct {
	Provider string `json:"provider,omitempty"`
	ID       string `json:"id,omitempty"`
}

// ModelRequest is what the agent exposes of a model request at
// BeforeModelRequest; CEL sees it as `request`. An agent that exposes a
// part leaves it zero (docs/hooks.md says which agent sends what).
type ModelRequest struct {
	// Messages is the number of messages in the request, Bytes their size
	// as the agent serialises them.
	Messages int `json:"messages,omitempty"`
	Bytes    int `json:"bytes,omitempty"`
	// Tools are the names of the tools the request offers the model.
	Tools []string `json:"tools,omitempty"`
	// Trigger is what the request answers, in the agent's words: the role
	// of its last message that an extension or hook did not add (Pi: user
	// for a prompt, toolResult for a tool's result).
	Trigger string `json:"trigger,omitempty"`
}

// ModelResponse is the payload of AfterModelResponse; CEL sees it as
// `response`.
type ModelResponse struct {
	Text string `json:"text,omitempty"`
	// StopReason is the model's, in the agent's words (stop, toolUse,
	// length, error, aborted…).
	StopReason string `json:"stopReason,omitempty"`
}

// StopInfo is the payload of Stop; CEL sees it as `stop`.
type StopInfo struct {
	// Active says the agent is already working on because a Stop hook
	// denied its last stop: a hook that denies again keeps it looping.
	Active bool `json:"active"`
	// LastMessage is the model's last text.
	LastMessage string `json:"lastMessage,omitempty"`
}

// CustomMessage is a typed message a hook emits (customMessage outcome):
// the agent keeps it in the session and projects it for the model as its
// type says (inContext, template).
type CustomMessage struct {
	Type    string `json:"type"`
	Content string `json:"content"`
	// Set by the host from the type's declaration: the extension that
	// declared it, whether the model sees it, and Text, what the model
	// reads (the content through the type's template).
	Extension string `json:"extension,omitempty"`
	InContext bool   `json:"inContext"`
	Text      string `json:"text,omitempty"`
}

// messageTypePattern is the API's pattern for a message type's name.
var messageTypePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// MaxCustomMessageBytes bounds one typed message's content: it enters the
// session and, in context, every later request.
const MaxCustomMessageBytes = 64 << 10

// customMessageOf reads a customMessage outcome: exactly type and content,
// both strings.
func customMessageOf(obj map[string]any) (*CustomMessage, error) {
	for k := range obj {
		if k != "type" && k != "content" {
			return nil, fmt.Errorf("outcome key %q: unknown field %q (a custom message has type and content)", OutcomeCustomMessage, k)
		}
	}
	typ, ok := obj["type"].(string)
	if !ok || !messageTypePattern.MatchString(typ) {
		return nil, fmt.Errorf("outcome key %q: type must be a string matching %s", OutcomeCustomMessage, messageTypePattern)
	}
	content, ok := obj["content"].(string)
	if !ok {
		return nil, fmt.Errorf("outcome key %q: content must be a string", OutcomeCustomMessage)
	}
	if len(content) > MaxCustomMessageBytes {
		return nil, fmt.Errorf("outcome key %q: content is %d bytes, more than the limit of %d", OutcomeCustomMessage, len(content), MaxCustomMessageBytes)
	}
	return &CustomMessage{Type: typ, Content: content}, nil
}

// checkDeclared refuses a custom message whose type the emitting extension
// did not declare: a type says whether the model sees it, so an undeclared
// one has no rule to follow.
func (r *registry) checkDeclared(extension string, m *CustomMessage) error {
	var own []string
	for _, t := range r.messageTypes {
		if t.Extension != extension {
			continue
		}
		if t.Type == m.Type {
			m.Extension, m.InContext = extension, t.InContext
			if t.InContext {
				m.Text = RenderMessage(t.Template, m.Content)
			}
			return nil
		}
		own = append(own, t.Type)
	}
	if len(own) == 0 {
		return fmt.Errorf("outcome key %q: message type %q is not declared: extension %s declares no messageTypes", OutcomeCustomMessage, m.Type, extension)
	}
	slices.Sort(own)
	return fmt.Errorf("outcome key %q: message type %q is not declared by extension %s (it declares %s)", OutcomeCustomMessage, m.Type, extension, strings.Join(own, ", "))
}

// Runtime is where a call or event happens: the agent's session and working
// directory. Tool calls carry it in their context (WithRuntime), so the
// tool paths keep their signatures; every hook sees it as `session` and `cwd`.
type Runtime struct {
	Session SessionInfo
	Cwd     string
}

type runtimeKey struct{}

// WithRuntime returns ctx carrying rt for the hooks of the calls made with it.
func WithRuntime(ctx context.Context, rt Runtime) context.Context {
	return context.WithValue(ctx, runtimeKey{}, rt)
}

// RuntimeOf is the Runtime ctx carries; zero when none.
func RuntimeOf(ctx context.Context) Runtime {
	rt, _ := ctx.Value(runtimeKey{}).(Runtime)
	return rt
}

// withPayload gives an event the payload its hooks read, empty where the
// agent sent none: a hook reads stop.active as false rather than failing on
// a missing variable (and, at BeforeModelRequest, blocking the request).
func withPayload(req EventRequest) EventRequest {
	switch req.Event {
	case vocab.TurnStart, vocab.TurnEnd:
		if req.Turn == nil {
			req.Turn = &Turn{}
		}
	case vocab.BeforeModelRequest, vocab.AfterModelResponse:
		if req.Model == nil {
			req.Model = &ModelInfo{}
		}
		if req.Event == vocab.BeforeModelRequest && req.Request == nil {
			req.Request = &ModelRequest{}
		}
		if req.Event == vocab.AfterModelResponse && req.Response == nil {
			req.Response = &ModelResponse{}
		}
	case vocab.Stop:
		if req.Stop == nil {
			req.Stop = &StopInfo{}
		}
	}
	return req
}
