package hostd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/jsonlimit"
)

// MaxBodyBytes bounds a request body. It equals the input size the CEL cost
// estimate assumes (exthost.MaxInputSize), so no hook sees a bigger value.
const MaxBodyBytes = exthost.MaxInputSize

// Wire shapes of hostd's API (docs/hostd.md). Fields may be added, never renamed.
type (
	// CallRequest is the body of /v1/before (call) and /v1/after (call, result).
	CallRequest struct {
		Call   exthost.ToolCall    `json:"call"`
		Result *exthost.ToolResult `json:"result,omitempty"`
		// AcceptArguments (/v1/before) says the caller runs the arguments
		// hostd answers. A caller that does not say so cannot apply a
		// rewrite, so a rewritten call is blocked for it rather than run
		// as the agent sent it.
		AcceptArguments bool `json:"acceptArguments,omitempty"`
		// Headless (/v1/before) says the agent has no user to ask: an
		// imposed hook's ask with approval route Headless goes to the
		// cluster's approvers (docs/hooks.md, "Approvals").
		Headless bool `json:"headless,omitempty"`
		// Session and Cwd are where the call is made; every hook sees them.
		Session *exthost.SessionInfo `json:"session,omitempty"`
		Cwd     string               `json:"cwd,omitempty"`
	}
	// BeforeResponse is {"allowed":true} or a paired blocked result. When
	// hooks rewrote the call, arguments are the ones to run (docs/hooks.md);
	// ask says the block is a question an agent with a user may ask, and on
	// yes run arguments. afterHooks says whether any after hook observes a
	// result of this tool: when false, POST /v1/after would run nothing and
	// an agent may skip it (absent, from an older hostd: call it).
	BeforeResponse struct {
		Allowed     bool                 `json:"allowed"`
		AfterHooks  bool                 `json:"afterHooks"`
		Ask         bool                 `json:"ask,omitempty"`
		Arguments   map[string]any       `json:"arguments,omitempty"`
		Result      *exthost.ToolResult  `json:"result,omitempty"`
		Diagnostics []exthost.Diagnostic `json:"diagnostics,omitempty"`
	}
	// EventRequest is the body of POST /v1/events/{event}: the session and,
	// for UserInput and BeforeAgentStart, the prompt.
	EventRequest struct {
		Session exthost.SessionInfo `json:"session"`
		Prompt  *exthost.Prompt     `json:"prompt,omitempty"`
		// ProjectContext (SessionStart) asks for the Workspace's project
		// content (the tenants' text, labelled with its namespaces) ahead of
		// the hooks' context: Claude Code's and Codex's command hooks ask,
		// since their managed memory holds only the platform's text.
		ProjectContext bool `json:"projectContext,omitempty"`
		// Cwd is the agent's working directory.
		Cwd string `json:"cwd,omitempty"`
		// The payloads of the turn, model and stop events (docs/hooks.md).
		Turn     *exthost.Turn          `json:"turn,omitempty"`
		Model    *exthost.ModelInfo     `json:"model,omitempty"`
		Request  *exthost.ModelRequest  `json:"request,omitempty"`
		Response *exthost.ModelResponse `json:"response,omitempty"`
		Stop     *exthost.StopInfo      `json:"stop,omitempty"`
	}
	// EventResponse is what the event's hooks decided: allowed (false with
	// message: stop; with ask: ask the user, or stop when headless), the
	// rewritten prompt text in input, and context for the model.
	EventResponse struct {
		Allowed     bool                 `json:"allowed"`
		Ask         bool                 `json:"ask,omitempty"`
		Message     string               `json:"message,omitempty"`
		Extension   string               `json:"extension,omitempty"`
		Hook        string               `json:"hook,omitempty"`
		Input       *string              `json:"input,omitempty"`
		Context     string               `json:"context,omitempty"`
		Diagnostics []exthost.Diagnostic `json:"diagnostics,omitempty"`
		// Summary (BeforeCompact) is the summary the agent keeps.
		Summary *string `json:"summary,omitempty"`
		// Messages are the typed messages hooks emitted, in order.
		Messages []exthost.CustomMessage `json:"messages,omitempty"`
	}
	// AfterResponse carries the after hooks' diagnostics; always a list.
	AfterResponse struct {
		Diagnostics []exthost.Diagnostic `json:"diagnostics"`
	}
	// RenderRequest renders a template.
	RenderRequest struct {
		Template string            `json:"template"`
		Args     map[string]string `json:"args"`
	}
	// ActivateRequest activates a skill with some of its files.
	ActivateRequest struct {
		Skill string   `json:"skill"`
		Files []string `json:"files"`
	}
	// ErrorResponse accompanies every non-2xx status.
	ErrorResponse struct {
		Error string `json:"error"`
	}
)

// errTooLarge is a body over MaxBodyBytes.
var errTooLarge = fmt.Errorf("request body exceeds %d bytes", MaxBodyBytes)

// decode reads exactly one JSON document of at most MaxBodyBytes into v.
// Unknown fields are accepted: agents may send newer shapes.
func decode(r io.Reader, v any) error {
	var body []byte
	if b, ok := r.(*readBody); ok {
		// The limiter read the body already: decode its bytes in place
		// rather than copying them again (a copy per pass is garbage the
		// collector must catch up with under load).
		body = b.data
	} else {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r, MaxBodyBytes+1)); err != nil {
			return err
		}
	}
	if len(body) > MaxBodyBytes {
		return errTooLarge
	}
	// An object naming a key twice, at any depth, is refused
	// (jsonlimit.DuplicateKeyError says why that matters).
	if err := jsonlimit.CheckDuplicateKeys(body); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	if b, ok := r.(*readBody); ok {
		// Nothing reads a body twice; decoded values hold copies.
		defer b.drop()
	}
	if err := json.Unmarshal(body, v); err != nil {
		if syntax := (*json.SyntaxError)(nil); errors.As(err, &syntax) && strings.Contains(err.Error(), "after top-level value") {
			return errors.New("request body: trailing data after the JSON document")
		}
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// DecodeCall decodes a /v1/before or /v1/after body; withResult requires the
// result an after call must carry.
func DecodeCall(r io.Reader, withResult bool) (CallRequest, error) {
	var req CallRequest
	// The call's arguments, the one part of a body that may hold 100,000
	// values, go through jsonlimit.Decode (callWire); the rest as before.
	wire := struct {
		*callFields
		Call callWire `json:"call"`
	}{callFields: (*callFields)(&req)}
	if err := decode(r, &wire); err != nil {
		return req, err
	}
	req.Call = wire.Call.toolCall()
	if req.Call.ID == "" || req.Call.Name == "" {
		return req, errors.New("call.id and call.name are required")
	}
	if withResult && req.Result == nil {
		return req, errors.New("result is required")
	}
	return req, nil
}

// callFields are CallRequest's fields, decoded by encoding/json beside the
// call (a type of its own so that callWire's Call shadows CallRequest's).
type callFields CallRequest

// callWire is exthost.ToolCall as the wire carries it, with its arguments
// decoded by jsonlimit.Decode: the same values at a third less garbage for a list of
// tiny values (docs/benchmarks.md, "hostd under 32 concurrent maximal
// requests").
type callWire struct {
	ID        string           `json:"id"`
	Name      string           `json:"name"`
	Arguments jsonlimit.Object `json:"arguments,omitempty"`
}

func (c callWire) toolCall() exthost.ToolCall {
	return exthost.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}

// toolFields are ToolRequest's fields beside the call (as callFields).
type toolFields ToolRequest

// decodeToolRequest decodes a /v1/tools/{name} body, its call's arguments
// as DecodeCall decodes them.
func decodeToolRequest(r io.Reader) (ToolRequest, error) {
	var req ToolRequest
	wire := struct {
		*toolFields
		Call callWire `json:"call"`
	}{toolFields: (*toolFields)(&req)}
	if err := decode(r, &wire); err != nil {
		return req, err
	}
	req.Call = wire.Call.toolCall()
	return req, nil
}

// runtime is ctx carrying the call's session and cwd for its hooks.
func (req CallRequest) runtime(ctx context.Context) context.Context {
	rt := exthost.Runtime{Cwd: req.Cwd}
	if req.Session != nil {
		rt.Session = *req.Session
	}
	return exthost.WithRuntime(ctx, rt)
}

// warmWire builds, once and off any call's path, what encoding/json builds
// on a type's first use (its field lists and encoders) for the tool calls'
// bodies and answers. hostd's first /v1/before otherwise paid for it: 0.6–1.1
// ms against 0.15–0.3 ms for the calls after it (docs/benchmarks.md, "the
// first calls' tail"). Nothing is recorded or sent.
func warmWire() {
	const call = `{"call":{"id":"warm","name":"bash","arguments":{"command":"ls"}},"result":{"toolCallId":"warm","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}],"details":{}},"acceptArguments":true}`
	_, _ = DecodeCall(strings.NewReader(call), true)
	var req EventRequest
	_ = decode(strings.NewReader(`{"session":{"id":"warm"},"prompt":{"text":"warm"}}`), &req)
	for _, v := range []any{BeforeResponse{}, AfterResponse{}, EventResponse{}, ErrorResponse{}} {
		_ = json.NewEncoder(io.Discard).Encode(v)
	}
}
