package resources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
)

// MaxSteps bounds a command's steps, as the Template CRD does.
const MaxSteps = 16

// maxArgumentDepth bounds the nesting of a tool step's arguments: walking
// them recurses, and no tool's input needs more.
const maxArgumentDepth = 32

// PlannedStep is one step of a command as it would run (rule R-TPL-5): a tool
// call with its arguments filled, or a template rendered into the user
// message.
type PlannedStep struct {
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Template is the template a render step renders; Text is its text.
	Template string `json:"template,omitempty"`
	Text     string `json:"text,omitempty"`
}

// Plan is a command's steps, in order (none for a template without steps),
// and the user message its render steps make: their texts joined by a blank
// line, or the body for a template without steps.
type Plan struct {
	Steps []PlannedStep
	Text  string
}

// StepsNotRun is the note a render that does not run a command's tool steps
// carries (hostd, loadout render): the message is only the template part.
const StepsNotRun = "This command has tool steps; they are not run here: the message is only its template part. An agent that runs commands (Pi with the Loadout package) runs each tool step through the hooks, in order, before sending the message."

// RenderedCommand is a rendered template as hostd and loadout render answer
// it: the user message (R-TPL-3), and for a command with steps the plan and,
// when some are tool steps, StepsNotRun.
type RenderedCommand struct {
	UserMessage
	Steps []PlannedStep `json:"steps,omitempty"`
	Note  string        `json:"note,omitempty"`
}

// Rendered is the plan as a RenderedCommand stamped with at.
func (p Plan) Rendered(at time.Time) RenderedCommand {
	r := RenderedCommand{UserMessage: NewUserMessage(p.Text, at), Steps: p.Steps}
	if p.HasToolSteps() {
		r.Note = StepsNotRun
	}
	return r
}

// TemplateBody looks a template's body up by name.
type TemplateBody func(name string) (string, bool)

// CommandVariables returns the distinct placeholder names a template's command
// uses, in order of first appearance: the body's for a template without
// steps; otherwise those of each step in turn (a tool step's argument strings
// in key order, a render step's template body).
func CommandVariables(body string, steps []contract.TemplateStep, bodyOf TemplateBody) []string {
	if len(steps) == 0 {
		return Variables(body)
	}
	var texts []string
	for _, s := range steps {
		switch {
		case s.Tool != "":
			v, err := decodeArguments(s.Arguments)
			if err == nil {
				walkStrings(v, func(str string) { texts = append(texts, str) })
			}
		case s.Render:
			texts = append(texts, body)
		case s.Template != "":
			if b, ok := bodyOf(s.Template); ok {
				texts = append(texts, b)
			}
		}
	}
	// NUL never occurs inside a placeholder, so joining cannot make one.
	return Variables(strings.Join(texts, "\x00"))
}

// PlanCommand fills a command's steps with args without running anything
// (R-TPL-4). Every variable the command uses must have an argument
// (R-TPL-2); the plan's text and arguments together stay under
// MaxRenderedBytes.
func PlanCommand(name, body string, steps []contract.TemplateStep, bodyOf TemplateBody, args map[string]string) (Plan, error) {
	fail := func(err error) (Plan, error) {
		var te *TemplateError
		if errors.As(err, &te) {
			te.Template = name
		}
		return Plan{}, err
	}
	for _, v := range CommandVariables(body, steps, bodyOf) {
		if _, ok := args[v]; !ok {
			return fail(&TemplateError{Variable: v, Message: "missing argument"})
		}
	}
	if len(steps) == 0 {
		text, err := RenderTemplate(body, args)
		if err != nil {
			return fail(err)
		}
		return Plan{Text: text}, nil
	}
	plan := Plan{Steps: make([]PlannedStep, 0, len(steps))}
	var texts []string
	size := 0
	for i, s := range steps {
		var p PlannedStep
		switch {
		case s.Tool != "":
			filled, err := fillArguments(s.Arguments, args, MaxRenderedBytes-size)
			if err != nil {
				return fail(&TemplateError{Message: fmt.Sprintf("steps[%d].arguments: %v", i, err)})
			}
			p = PlannedStep{Tool: s.Tool, Arguments: filled}
			size += len(filled)
		default:
			target := name
			if s.Template != "" {
				target = s.Template
			}
			b, ok := bodyOf(target)
			if !ok {
				return fail(&TemplateError{Message: fmt.Sprintf("steps[%d].template: no template %q in the context", i, target)})
			}
			text, err := RenderTemplate(b, args)
			if err != nil {
				return fail(err)
			}
			p = PlannedStep{Template: target, Text: text}
			texts = append(texts, text)
			size += len(text)
		}
		if size > MaxRenderedBytes {
			return fail(&TemplateError{Message: fmt.Sprintf("the command's rendered steps would exceed %d bytes; shorten the arguments", MaxRenderedBytes)})
		}
		plan.Steps = append(plan.Steps, p)
	}
	plan.Text = strings.Join(texts, "\n\n")
	return plan, nil
}

// HasToolSteps reports whether a command runs tools, which only agents that
// can run them do; elsewhere its render steps alone become the message.
func (p Plan) HasToolSteps() bool {
	return slices.ContainsFunc(p.Steps, func(s PlannedStep) bool { return s.Tool != "" })
}

// validateSteps checks the shape of a template's steps (the CRD checks the
// same for objects; directory roots and the CLI reach here without it).
func validateSteps(steps []contract.TemplateStep) (field, msg string) {
	if len(steps) > MaxSteps {
		return "steps", fmt.Sprintf("has %d steps, more than %d", len(steps), MaxSteps)
	}
	for i, s := range steps {
		field := fmt.Sprintf("steps[%d]", i)
		actions := 0
		for _, set := range []bool{s.Tool != "", s.Render, s.Template != ""} {
			if set {
				actions++
			}
		}
		if actions != 1 {
			return field, "must set exactly one of tool, render or template"
		}
		if len(s.Arguments) > 0 && s.Tool == "" {
			return field + ".arguments", "belong to a tool step"
		}
		if s.Tool != "" && len(s.Arguments) > 0 {
			if _, err := decodeArguments(s.Arguments); err != nil {
				return field + ".arguments", err.Error()
			}
		}
	}
	return "", ""
}

// checkStepTargets refuses a winning template whose tool step names a tool
// the registry lacks or the Workspace denies, or whose render step names a
// template the catalog lacks: such a command could never run.
func checkStepTargets(cat *Catalog, reg contract.Registry) error {
	for _, t := range cat.Templates() {
		for i, s := range t.Steps {
			invalid := func(field, msg string) error {
				return &InvalidResourceError{Kind: KindTemplate, Origin: t.Origin, Field: fmt.Sprintf("steps[%d].%s", i, field), Message: msg}
			}
			switch {
			case s.Tool != "" && !slices.ContainsFunc(reg.Tools, func(x contract.Tool) bool { return x.Name == s.Tool }):
				return invalid("tool", fmt.Sprintf("tool %q is not in the Workspace's registry", s.Tool))
			case s.Tool != "" && slices.Contains(reg.Deny, s.Tool):
				return invalid("tool", fmt.Sprintf("tool %q is denied by the Workspace", s.Tool))
			case s.Template != "":
				if _, ok := cat.templates[s.Template]; !ok {
					return invalid("template", fmt.Sprintf("template %q is not in the catalog", s.Template))
				}
			}
		}
	}
	return nil
}

// decodeArguments parses a tool step's arguments: a JSON object, numbers kept
// as written, nested at most maxArgumentDepth deep. Empty means {}.
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	if err := checkDepth(raw); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if d.More() {
		return nil, errors.New("not valid JSON: trailing data")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON object")
	}
	return obj, nil
}

// checkDepth refuses JSON nested deeper than maxArgumentDepth before it is
// decoded, counting brackets outside strings.
func checkDepth(raw []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > maxArgumentDepth {
				return fmt.Errorf("nested more than %d deep", maxArgumentDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// walkStrings calls f with every string value of v (not object keys), objects
// in key order, so the order is deterministic.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkStrings(x[k], f)
		}
	}
}

// errArgumentsTooLarge stops filling arguments once their strings outgrow
// the budget, so many placeholders fed one large argument cannot make hostd
// build gigabytes before the plan's size is checked.
var errArgumentsTooLarge = fmt.Errorf("the filled arguments would exceed %d bytes; shorten the arguments", MaxRenderedBytes)

// fillArguments renders every string value of a tool step's arguments with
// args, at most budget bytes of strings in all, and encodes the result with
// sorted keys, HTML left unescaped.
func fillArguments(raw json.RawMessage, args map[string]string, budget int) (json.RawMessage, error) {
	obj, err := decodeArguments(raw)
	if err != nil {
		return nil, err
	}
	filled, err := fillValue(obj, args, &budget)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(filled); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func fillValue(v any, args map[string]string, budget *int) (any, error) {
	switch x := v.(type) {
	case string:
		s, err := RenderTemplate(x, args)
		if err != nil {
			return nil, err
		}
		if *budget -= len(s); *budget < 0 {
			return nil, errArgumentsTooLarge
		}
		return s, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			f, err := fillValue(e, args, budget)
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			f, err := fillValue(e, args, budget)
			if err != nil {
				return nil, err
			}
			out[k] = f
		}
		return out, nil
	}
	return v, nil
}
