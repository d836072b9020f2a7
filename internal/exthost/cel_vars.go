package exthost

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// celVars is the CEL activation of one Input: call, workspace and, after the
// call, result. Each variable is converted on first use and then reused by
// every CEL hook of the call; CEL adapts nested values lazily, so a hook that
// reads one argument does not pay for converting all of them. Built-in
// handlers run one after another, so no lock is needed.
type celVars struct {
	in                                       *Input
	call, workspace, result, session, prompt ref.Val
	turn, model, request, response, stop     ref.Val
	// largest is largestValue plus one, 0 until computed.
	largest uint64
}

// largestValue is the size of the largest value the expression can read:
// string bytes (at least its length in code points, which CEL counts), list
// elements or map entries, map keys included. It is an upper bound for every
// size the cost estimate assumes, found in one pass over the input.
func (v *celVars) largestValue() uint64 {
	if v.largest == 0 {
		se := v.in.Session
		m := largestIn(v.in.Call.ID, v.in.Call.Name, v.in.Call.Arguments, v.in.Workspace.Name, v.in.Workspace.Namespace,
			se.ID, se.Reason, se.Agent, se.AgentID, se.AgentType, v.in.Cwd)
		if p := v.in.Prompt; p != nil {
			m = max(m, largestIn(p.Text, p.Source))
		}
		m = max(m, v.in.payloadLargest())
		if r := v.in.Result; r != nil {
			m = max(m, uint64(len(r.Content)), largestIn(r.ToolCallID, r.ToolName, r.Details))
			for _, c := range r.Content {
				m = max(m, largestIn(c.Type, c.Text, c.Data, c.MimeType))
			}
		}
		v.largest = m + 1
	}
	return v.largest - 1
}

// largestIn returns the size of the largest value among values and
// everything they contain.
func largestIn(values ...any) uint64 {
	var m uint64
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			m = max(m, uint64(len(x)))
		case []any:
			m = max(m, uint64(len(x)))
			for _, e := range x {
				walk(e)
			}
		case []string:
			m = max(m, uint64(len(x)))
			for _, e := range x {
				m = max(m, uint64(len(e)))
			}
		case map[string]any:
			m = max(m, uint64(len(x)))
			for k, e := range x {
				m = max(m, uint64(len(k)))
				walk(e)
			}
		}
	}
	for _, x := range values {
		walk(x)
	}
	return m
}

var _ interpreter.Activation = (*celVars)(nil)

func newCELVars(in *Input) *celVars { return &celVars{in: in} }

// ResolveName implements interpreter.Activation.
func (v *celVars) ResolveName(name string) (any, bool) {
	a := types.DefaultTypeAdapter
	switch name {
	case "call":
		if v.call == nil {
			v.call = types.NewStringInterfaceMap(a, callValue(v.in.Call))
		}
		return v.call, true
	case "workspace":
		if v.workspace == nil {
			ws := v.in.Workspace
			v.workspace = types.NewStringStringMap(a, map[string]string{"name": ws.Name, "namespace": ws.Namespace})
		}
		return v.workspace, true
	case "session":
		if v.session == nil {
			v.session = types.NewStringStringMap(a, sessionValue(v.in.Session))
		}
		return v.session, true
	case "cwd":
		return types.String(v.in.Cwd), true
	case "sandboxed":
		return types.Bool(sandboxedFor(v.in.Workspace, v.in.Session)), true
	case "params":
		// Each hook's own (paramsActivation); a hook of an extension
		// without a paramRef sees an empty map.
		return types.NewStringStringMap(a, v.in.Params), true
	case "turn", "model", "request", "response", "stop":
		return v.resolvePayload(name)
	case "prompt":
		if v.in.Prompt == nil {
			return nil, false
		}
		if v.prompt == nil {
			v.prompt = types.NewStringStringMap(a, map[string]string{"text": v.in.Prompt.Text, "source": v.in.Prompt.Source})
		}
		return v.prompt, true
	case "result":
		if v.in.Result == nil {
			return nil, false
		}
		if v.result == nil {
			v.result = types.NewStringInterfaceMap(a, resultValue(*v.in.Result))
		}
		return v.result, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (v *celVars) Parent() interpreter.Activation { return nil }

var emptyArgs = map[string]any{}

func callValue(c ToolCall) map[string]any {
	args := c.Arguments
	if args == nil {
		args = emptyArgs
	}
	return map[string]any{"id": c.ID, "name": c.Name, "arguments": args}
}

func resultValue(r ToolResult) map[string]any {
	content := make([]any, len(r.Content))
	for i, c := range r.Content {
		m := map[string]any{"type": c.Type, "text": c.Text}
		if c.Data != "" {
			m["data"], m["mimeType"] = c.Data, c.MimeType
		}
		content[i] = m
	}
	details := r.Details
	if details == nil {
		details = emptyArgs
	}
	return map[string]any{
		"toolCallId": r.ToolCallID, "toolName": r.ToolName, "isError": r.IsError,
		"content": content, "details": details,
	}
}
