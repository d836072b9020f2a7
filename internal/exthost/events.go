package exthost

import (
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Outcome keys a hook may return (a CEL map, a webhook's answer). Which keys
// an event allows is its eventSpec's; docs/hooks.md is the table users read.
const (
	OutcomeAllow     = "allow"
	OutcomeMessage   = "message"
	OutcomeAsk       = "ask"
	OutcomeArguments = "arguments"
	OutcomeInput     = "input"
	OutcomeContext   = "context"
	// OutcomeSummary is BeforeCompact's summary: the agent keeps it instead
	// of summarising the history itself.
	OutcomeSummary = "summary"
	// OutcomeCustomMessage is a typed message {type, content} the hook's
	// extension declared in its messageTypes: the agent keeps it in the
	// session and projects it as the type says.
	OutcomeCustomMessage = "customMessage"
)

// outcomeKind is the JSON type an outcome key's value must have.
type outcomeKind int

const (
	kindBool outcomeKind = iota
	kindString
	kindObject
)

var outcomeKinds = map[string]outcomeKind{
	OutcomeAllow:     kindBool,
	OutcomeMessage:   kindString,
	OutcomeAsk:       kindBool,
	OutcomeArguments: kindObject,
	OutcomeInput:     kindString,
	OutcomeContext:   kindString,
	OutcomeSummary:   kindString,
	// A map with exactly type and content, both strings (customMessageOf).
	OutcomeCustomMessage: kindObject,
}

func (k outcomeKind) String() string {
	return [...]string{"bool", "string", "map"}[k]
}

// eventSpec says what hooks of one event see and may return.
type eventSpec struct {
	// blocking events fail closed: a denial or a failure stops what the
	// event guards. Other events only observe: a denial is an audit finding
	// and a failure a diagnostic.
	blocking bool
	// continues: a denial is an answer the agent acts on (Stop: it keeps
	// working, told why), while a failure is only a diagnostic, so a broken
	// hook never keeps an agent running.
	continues bool
	// outcomes are the keys a hook of the event may return.
	outcomes []string
}

var eventSpecs = map[vocab.HookEvent]eventSpec{
	vocab.SessionStart:       {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeContext, OutcomeCustomMessage}},
	vocab.UserInput:          {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeAsk, OutcomeInput, OutcomeContext, OutcomeCustomMessage}},
	vocab.BeforeAgentStart:   {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeAsk, OutcomeInput, OutcomeContext, OutcomeCustomMessage}},
	vocab.TurnStart:          {outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.BeforeModelRequest: {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeContext}},
	vocab.AfterModelResponse: {outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.BeforeToolCall:     {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeAsk, OutcomeArguments}},
	vocab.AfterToolResult:    {outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.ToolFailure:        {outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.TurnEnd:            {outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.Stop:               {continues: true, outcomes: []string{OutcomeAllow, OutcomeMessage}},
	vocab.BeforeCompact:      {blocking: true, outcomes: []string{OutcomeAllow, OutcomeMessage, OutcomeSummary}},
	vocab.SessionEnd:         {outcomes: []string{OutcomeAllow, OutcomeMessage}},
}

// Events lists every hook event in session order.
func Events() []vocab.HookEvent {
	return []vocab.HookEvent{
		vocab.SessionStart, vocab.UserInput, vocab.BeforeAgentStart, vocab.TurnStart,
		vocab.BeforeModelRequest, vocab.AfterModelResponse, vocab.BeforeToolCall,
		vocab.AfterToolResult, vocab.ToolFailure, vocab.TurnEnd, vocab.Stop,
		vocab.BeforeCompact, vocab.SessionEnd,
	}
}

func knownEvent(e vocab.HookEvent) bool {
	_, ok := eventSpecs[e]
	return ok
}

func eventNames() []string {
	out := make([]string, 0, len(eventSpecs))
	for _, e := range Events() {
		out = append(out, string(e))
	}
	return out
}

// Blocking reports whether a denial or failure of event's hooks stops what
// the event guards (true) or is only reported (false).
func Blocking(event vocab.HookEvent) bool { return eventSpecs[event].blocking }

// Continues reports whether a denial of event's hooks is an answer the
// agent acts on while a failure is only reported (Stop).
func Continues(event vocab.HookEvent) bool { return eventSpecs[event].continues }

// OutcomeKeys lists the outcome keys event's hooks may return.
func OutcomeKeys(event vocab.HookEvent) []string {
	return slices.Clone(eventSpecs[event].outcomes)
}

// OutcomeKeyError is an outcome key an event does not allow, or a value of
// the wrong type. The controller rejects a hook whose CEL can return one; at
// evaluation it fails the hook closed.
type OutcomeKeyError struct {
	Event vocab.HookEvent
	Key   string
	// Got is the value's type for a wrong type; empty for a key the event
	// does not allow.
	Got string
}

func (e *OutcomeKeyError) Error() string {
	kind, known := outcomeKinds[e.Key]
	switch {
	case e.Got != "" && known:
		return fmt.Sprintf("outcome key %q must be a %s, not %s", e.Key, kind, e.Got)
	case known:
		return fmt.Sprintf("outcome key %q is not allowed for %s hooks (allowed: %s)", e.Key, e.Event, joinKeys(e.Event))
	default:
		return fmt.Sprintf("unknown outcome key %q (allowed for %s hooks: %s)", e.Key, e.Event, joinKeys(e.Event))
	}
}

// allowsKey reports whether event's hooks may return key.
func allowsKey(event vocab.HookEvent, key string) bool {
	return slices.Contains(eventSpecs[event].outcomes, key)
}

// verdictFromMap reads an outcome map. A missing allow means allowed; a
// denial or ask without a message takes fallback. Every key must be one the
// event allows, with a value of its type.
func verdictFromMap(event vocab.HookEvent, m map[string]any, fallback string) (Verdict, error) {
	v := Verdict{Allowed: true}
	for key, val := range m {
		if !allowsKey(event, key) {
			return Verdict{}, &OutcomeKeyError{Event: event, Key: key}
		}
		kind := outcomeKinds[key]
		wrong := func() error { return &OutcomeKeyError{Event: event, Key: key, Got: jsonType(val)} }
		switch kind {
		case kindBool:
			b, ok := val.(bool)
			if !ok {
				return Verdict{}, wrong()
			}
			if key == OutcomeAllow {
				v.Allowed = b
			} else {
				v.Ask = b
			}
		case kindString:
			s, ok := val.(string)
			if !ok {
				return Verdict{}, wrong()
			}
			switch key {
			case OutcomeMessage:
				v.Message = s
			case OutcomeInput:
				v.Input = &s
			case OutcomeContext:
				v.Context = s
			case OutcomeSummary:
				v.Summary = &s
			}
		case kindObject:
			obj, ok := val.(map[string]any)
			if !ok {
				return Verdict{}, wrong()
			}
			if key == OutcomeCustomMessage {
				m, err := customMessageOf(obj)
				if err != nil {
					return Verdict{}, err
				}
				v.CustomMessage = m
				continue
			}
			v.Arguments = obj
		}
	}
	if v.Ask {
		// An ask is the hook's answer whatever allow says: a webhook asks
		// with {"allowed":false,"ask":true}, the shape hostd answers.
		v.Allowed = true
	}
	if (!v.Allowed || v.Ask) && v.Message == "" {
		v.Message = fallback
	}
	return v, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case map[string]any:
		return "map"
	case []any:
		return "list"
	default:
		return "number"
	}
}
