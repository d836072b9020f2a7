package exthost

import (
	"encoding/json"
	"maps"
)

// Deep copies keep the core's result a fact nobody can change (rule R-HK-6):
// every hook and the caller get their own copy, so a hook that mutates its
// input, or keeps running after a timeout, touches nothing anyone else sees.
// Go has no freezing, so a private copy is how a hook's input stays frozen.

func (c ToolCall) deepCopy() ToolCall {
	c.Arguments = copyMap(c.Arguments)
	return c
}

func (r ToolResult) deepCopy() ToolResult {
	if r.Content != nil {
		r.Content = append([]Content(nil), r.Content...)
	}
	r.Details = copyMap(r.Details)
	return r
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

// copyValue copies a JSON value. Values of other types (a core may return its
// own structs) go through a JSON round trip: the copy is then their JSON form,
// which is also exactly what an agent on the wire would see.
func copyValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return x
	case map[string]any:
		return copyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case []string:
		return append([]string(nil), x...)
	case map[string]string:
		return maps.Clone(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			return nil
		}
		return out
	}
}

// merged returns a copy of c with patch merged into its arguments: each key
// of patch replaces the argument of that name, and a null removes it
// (docs/hooks.md). patch is copied, so the hook that returned it keeps
// nothing the call holds.
func (c ToolCall) merged(patch map[string]any) ToolCall {
	c = c.deepCopy()
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	for k, v := range patch {
		if v == nil {
			delete(c.Arguments, k)
			continue
		}
		c.Arguments[k] = copyValue(v)
	}
	return c
}
