package exthost

import (
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// The hook variables' CEL types. Each variable with a fixed shape is an
// object type whose fields are declared here, so the checker refuses
// `size(turn.toolCalls)` (an int) or `turn.tools` (no such field) when an
// extension is compiled, at reconcile and at hostd's load, never on every
// call. Only what is open by nature is a map: a call's arguments, a result's
// details (map(string, dyn)) and params (map(string, string)).
//
// The declaration is for the checker only: at run time the variables stay
// the lazily adapted maps of celVars. The fields below carry no getters, so
// cel-go's planner selects them as map keys (interpreter.attrFactory
// NewQualifier), and every declared field is a key celVars always sets,
// except a content block's data and mimeType (test them with has()).

// celField is one field of a hook object type.
type celField struct {
	name string
	typ  *types.Type
}

// celObject is one hook object type: its CEL name and fields, in the order
// docs/hooks.md lists them.
type celObject struct {
	typ    *types.Type
	fields []celField
}

func newCELObject(name string, fields ...celField) celObject {
	return celObject{typ: types.NewObjectType("loadout." + name), fields: fields}
}

func strField(names ...string) []celField {
	out := make([]celField, len(names))
	for i, n := range names {
		out[i] = celField{n, types.StringType}
	}
	return out
}

var (
	celOpenObject = types.NewMapType(types.StringType, types.DynType)
	celTextMap    = types.NewMapType(types.StringType, types.StringType)

	celWorkspace = newCELObject("Workspace", strField("name", "namespace")...)
	celSession   = newCELObject("Session", strField("id", "reason", "agent", "agentId", "agentType")...)
	celPrompt    = newCELObject("Prompt", strField("text", "source")...)
	celTurn      = newCELObject("Turn", celField{"index", types.IntType}, celField{"text", types.StringType}, celField{"toolCalls", types.IntType})
	celModel     = newCELObject("Model", strField("provider", "id")...)
	celRequest   = newCELObject("Request", celField{"messages", types.IntType}, celField{"bytes", types.IntType},
		celField{"tools", types.NewListType(types.StringType)}, celField{"trigger", types.StringType})
	celResponse  = newCELObject("Response", strField("text", "stopReason")...)
	celStop      = newCELObject("Stop", celField{"active", types.BoolType}, celField{"lastMessage", types.StringType})
	celCall      = newCELObject("Call", celField{"id", types.StringType}, celField{"name", types.StringType}, celField{"arguments", celOpenObject})
	celContent   = newCELObject("Content", strField("type", "text", "data", "mimeType")...)
	celResultObj = newCELObject("Result", celField{"toolCallId", types.StringType}, celField{"toolName", types.StringType},
		celField{"isError", types.BoolType}, celField{"content", types.NewListType(celContent.typ)}, celField{"details", celOpenObject})

	celObjects = []celObject{celWorkspace, celSession, celPrompt, celTurn, celModel, celRequest, celResponse, celStop, celCall, celResultObj, celContent}
)

// celVariable is one variable a hook sees and its type.
type celVariable struct {
	Name string
	Type *types.Type
}

// celCommonVariables are the variables of every event.
var celCommonVariables = []celVariable{
	{"workspace", celWorkspace.typ}, {"session", celSession.typ}, {"cwd", types.StringType},
	{"params", celTextMap}, {"sandboxed", types.BoolType},
}

// celEventVariables are the variables each event adds to celCommonVariables.
var celEventVariables = map[vocab.HookEvent][]celVariable{
	vocab.SessionStart:       nil,
	vocab.UserInput:          {{"prompt", celPrompt.typ}},
	vocab.BeforeAgentStart:   {{"prompt", celPrompt.typ}},
	vocab.TurnStart:          {{"turn", celTurn.typ}},
	vocab.BeforeModelRequest: {{"model", celModel.typ}, {"request", celRequest.typ}},
	vocab.AfterModelResponse: {{"model", celModel.typ}, {"response", celResponse.typ}},
	vocab.BeforeToolCall:     {{"call", celCall.typ}},
	vocab.AfterToolResult:    {{"call", celCall.typ}, {"result", celResultObj.typ}},
	vocab.ToolFailure:        {{"call", celCall.typ}, {"result", celResultObj.typ}},
	vocab.TurnEnd:            {{"turn", celTurn.typ}},
	vocab.Stop:               {{"stop", celStop.typ}},
	vocab.BeforeCompact:      nil,
	vocab.SessionEnd:         nil,
}

// CELVariableTypes lists the variables of event's hooks with their CEL types,
// as docs/hooks.md tables them: an object's fields are rows of their own
// (`turn.toolCalls`: int), nested objects included (`result.content[].text`).
// An empty event lists the variables every event has.
func CELVariableTypes(event vocab.HookEvent) [][2]string {
	vars := celCommonVariables
	if event != "" {
		vars = celEventVariables[event]
	}
	var rows [][2]string
	var add func(name string, t *types.Type)
	add = func(name string, t *types.Type) {
		if o, ok := celObjectOf(t); ok {
			for _, f := range o.fields {
				add(name+"."+f.name, f.typ)
			}
			return
		}
		if t.Kind() == types.ListKind {
			if o, ok := celObjectOf(t.Parameters()[0]); ok {
				rows = append(rows, [2]string{name, "list of objects"})
				for _, f := range o.fields {
					add(name+"[]."+f.name, f.typ)
				}
				return
			}
		}
		rows = append(rows, [2]string{name, t.String()})
	}
	for _, v := range vars {
		add(v.Name, v.Type)
	}
	return rows
}

func celObjectOf(t *types.Type) (celObject, bool) {
	if t.Kind() != types.StructKind {
		return celObject{}, false
	}
	for _, o := range celObjects {
		if o.typ.TypeName() == t.TypeName() {
			return o, true
		}
	}
	return celObject{}, false
}

// celDeclProvider declares the hook object types on top of CEL's own types.
type celDeclProvider struct {
	types.Provider
	objects map[string]celObject
}

func newCELDeclProvider(base types.Provider) *celDeclProvider {
	p := &celDeclProvider{Provider: base, objects: map[string]celObject{}}
	for _, o := range celObjects {
		p.objects[o.typ.TypeName()] = o
	}
	return p
}

func (p *celDeclProvider) FindStructType(name string) (*types.Type, bool) {
	if o, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(o.typ), true
	}
	return p.Provider.FindStructType(name)
}

func (p *celDeclProvider) FindStructFieldNames(name string) ([]string, bool) {
	if o, ok := p.objects[name]; ok {
		names := make([]string, len(o.fields))
		for i, f := range o.fields {
			names[i] = f.name
		}
		return names, true
	}
	return p.Provider.FindStructFieldNames(name)
}

// FindStructFieldType declares a field's type without IsSet or GetFrom, so
// the planner reads it as a map key (see above).
func (p *celDeclProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if o, ok := p.objects[name]; ok {
		for _, f := range o.fields {
			if f.name == field {
				return &types.FieldType{Type: f.typ}, true
			}
		}
		return nil, false
	}
	return p.Provider.FindStructFieldType(name, field)
}

// NewValue refuses to build a hook object in an expression: they are inputs.
func (p *celDeclProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.objects[name]; ok {
		return types.NewErr("%s is a hook input and cannot be constructed", strings.TrimPrefix(name, "loadout."))
	}
	return p.Provider.NewValue(name, fields)
}
