package exthost

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// EventRequest is one event that is not a tool call: its payload as the
// agent reports it (docs/hooks.md).
type EventRequest struct {
	Event   vocab.HookEvent
	Session SessionInfo
	// Prompt is the prompt of a UserInput or BeforeAgentStart event.
	Prompt *Prompt
	// Cwd is the agent's working directory.
	Cwd string
	// The payloads of the turn, model and stop events; each is copied for
	// every hook.
	Turn     *Turn
	Model    *ModelInfo
	Request  *ModelRequest
	Response *ModelResponse
	Stop     *StopInfo
}

// EventOutcome is what an event's hooks decided, composed in run order (the
// tenant's hooks in registration order, then the platform's imposed ones, so
// the platform judges the prompt as it goes on): the first denial (or, for a
// blocking event, failure) wins; input rewrites chain, each hook seeing the
// text the one before it left, and a rewrite after another hook asked blocks;
// context texts accumulate.
type EventOutcome struct {
	// Allowed false stops what the event guards, with Message as the reason.
	// Observing events are always allowed: their denials are audit findings.
	Allowed bool
	// Ask: no hook denied but one asked; Allowed is false and Message is the
	// question. An agent with a user may ask and, on yes, go on; a headless
	// agent denies.
	Ask     bool
	Message string
	// Extension and Hook name the hook that denied or asked.
	Extension, Hook string
	// Input is the rewritten prompt text; nil when no hook rewrote it.
	Input *string
	// Context is the text hooks added for the model, in hook order, each
	// part under a heading naming its origin (RenderHookText); Contexts are
	// the same texts, typed.
	Context  string
	Contexts []HookText `json:"-"`
	// Summary is the BeforeCompact summary the agent keeps: the last hook's
	// that returned one (the platform's, when it does). Nil: none.
	Summary *string
	// Messages are the typed messages hooks emitted, in hook order.
	Messages    []CustomMessage
	Diagnostics []Diagnostic
}

// Event runs the hooks of a non-tool event. A tool event is refused: those
// run through Decide, Execute and After, which pair results with the call.
func (h *Host) Event(ctx context.Context, req EventRequest) (EventOutcome, error) {
	if !knownEvent(req.Event) || req.Event.IsToolEvent() {
		return EventOutcome{}, fmt.Errorf("event %q is not a session event (one of %s)", req.Event, strings.Join(sessionEventNames(), ", "))
	}
	blocking, continues := Blocking(req.Event), Continues(req.Event)
	req = withPayload(req)
	reg := h.reg.Load()
	out := EventOutcome{Allowed: true}
	var prompt *Prompt
	if req.Prompt != nil {
		p := *req.Prompt
		prompt = &p
	}
	var contexts []HookText
	var asker verdict.Verdict // the hook whose question an ask is
	for _, b := range reg.byEvent[req.Event] {
		in := Input{Event: req.Event, Session: req.Session, Workspace: h.workspace, Cwd: req.Cwd,
			// Flat structs of strings and numbers: a copy is a deep copy
			// (Request's tool names are shared: nothing writes them).
			Turn: copyOf(req.Turn), Model: copyOf(req.Model), Request: copyOf(req.Request), Response: copyOf(req.Response), Stop: copyOf(req.Stop)}
		if prompt != nil {
			in.Prompt = copyOf(prompt)
		}
		hv, diag := runHook(ctx, b, in)
		if diag == nil && hv.CustomMessage != nil && allowsKey(req.Event, OutcomeCustomMessage) {
			if err := reg.checkDeclared(b.extension, hv.CustomMessage); err != nil {
				diag = &Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticError, Message: err.Error()}
			}
		}
		switch {
		case diag != nil && blocking:
			out.Diagnostics = append(out.Diagnostics, *diag)
			return denied(out, b, fmt.Sprintf("hook %s/%s failed (%s): %s is blocked", b.extension, b.hook.Name, diag.Kind, req.Event)), nil
		case diag != nil:
			out.Diagnostics = append(out.Diagnostics, *diag)
			continue
		case !hv.Allowed && (blocking || continues):
			return denied(out, b, hv.Message), nil
		case !hv.Allowed:
			out.Diagnostics = append(out.Diagnostics, Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticAudit, Message: hv.Message})
			continue
		}
		if hv.Input != nil && prompt != nil && allowsKey(req.Event, OutcomeInput) {
			if out.Ask && *hv.Input != prompt.Text {
				// An ask answers for the exact prompt that goes on: a
				// rewrite after another hook asked would spend its yes
				// on a prompt it never saw (docs/hooks.md, "Order").
				return denied(out, b, fmt.Sprintf("hook %s/%s rewrote the prompt after hook %s/%s asked about it, so the question would not be about the prompt that goes on; %s is blocked",
					b.extension, b.hook.Name, out.Extension, out.Hook, req.Event)), nil
			}
			prompt.Text = *hv.Input
			text := prompt.Text
			out.Input = &text
		}
		if hv.Ask && blocking && allowsKey(req.Event, OutcomeAsk) {
			// The one rule that combines verdicts (verdict.Combine): the
			// platform's ask is the question, whatever a tenant's hook
			// asked before it.
			asker = verdict.Combine(asker, b.verdict(verdict.Ask, hv.Message, ""))
			out.Ask, out.Message, out.Extension, out.Hook = true, asker.Reason, asker.Extension, asker.Hook
		}
		if hv.Context != "" && allowsKey(req.Event, OutcomeContext) {
			contexts = append(contexts, HookText{Extension: b.extension, Hook: b.hook.Name, Platform: b.imposed, Namespace: b.namespace, Text: hv.Context})
		}
		if hv.Summary != nil && allowsKey(req.Event, OutcomeSummary) {
			out.Summary = hv.Summary
		}
		if m := hv.CustomMessage; m != nil && allowsKey(req.Event, OutcomeCustomMessage) {
			out.Messages = append(out.Messages, *m)
		}
	}
	out.Contexts = contexts
	out.Context = RenderHookText(contexts)
	if out.Ask {
		out.Allowed = false
	}
	return out, nil
}

// denied is out turned into a denial by hook b: nothing it gathered before
// (rewrites, context) applies.
func denied(out EventOutcome, b boundHook, message string) EventOutcome {
	return EventOutcome{Message: message, Extension: b.extension, Hook: b.hook.Name, Diagnostics: out.Diagnostics}
}

// copyOf is a copy of *p, or nil.
func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// sessionEventNames are the events Event runs: every event but the tool
// events.
func sessionEventNames() []string {
	var out []string
	for _, e := range Events() {
		if !e.IsToolEvent() {
			out = append(out, string(e))
		}
	}
	return out
}
