package exthost

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// sessionValue is `session`: every field, empty where the agent sent none,
// so a hook reads session.agentType without has().
func sessionValue(s SessionInfo) map[string]string {
	return map[string]string{"id": s.ID, "reason": s.Reason, "agent": s.Agent, "agentId": s.AgentID, "agentType": s.AgentType}
}

// resolvePayload resolves the turn, model and stop events' variables; each
// exists only where its event has it (the environments refuse the rest).
func (v *celVars) resolvePayload(name string) (any, bool) {
	a := types.DefaultTypeAdapter
	in := v.in
	switch {
	case name == "turn" && in.Turn != nil:
		if v.turn == nil {
			v.turn = types.NewStringInterfaceMap(a, map[string]any{"index": in.Turn.Index, "text": in.Turn.Text, "toolCalls": in.Turn.ToolCalls})
		}
		return v.turn, true
	case name == "model" && in.Model != nil:
		if v.model == nil {
			v.model = types.NewStringStringMap(a, map[string]string{"provider": in.Model.Provider, "id": in.Model.ID})
		}
		return v.model, true
	case name == "request" && in.Request != nil:
		if v.request == nil {
			tools := in.Request.Tools
			if tools == nil {
				tools = []string{}
			}
			v.request = types.NewStringInterfaceMap(a, map[string]any{"messages": in.Request.Messages, "bytes": in.Request.Bytes,
				"tools": tools, "trigger": in.Request.Trigger})
		}
		return v.request, true
	case name == "response" && in.Response != nil:
		if v.response == nil {
			v.response = types.NewStringStringMap(a, map[string]string{"text": in.Response.Text, "stopReason": in.Response.StopReason})
		}
		return v.response, true
	case name == "stop" && in.Stop != nil:
		if v.stop == nil {
			v.stop = types.NewStringInterfaceMap(a, map[string]any{"active": in.Stop.Active, "lastMessage": in.Stop.LastMessage})
		}
		return v.stop, true
	}
	return nil, false
}

// payloadLargest is the largest value of the event payloads, for the cost
// bound (celVars.largestValue).
func (in *Input) payloadLargest() uint64 {
	var m uint64
	if t := in.Turn; t != nil {
		m = max(m, uint64(len(t.Text)))
	}
	if r := in.Model; r != nil {
		m = max(m, largestIn(r.Provider, r.ID))
	}
	if r := in.Request; r != nil {
		m = max(m, largestIn(r.Tools, r.Trigger))
	}
	if r := in.Response; r != nil {
		m = max(m, largestIn(r.Text, r.StopReason))
	}
	if s := in.Stop; s != nil {
		m = max(m, uint64(len(s.LastMessage)))
	}
	return m
}

// paramsActivation gives one hook its extension's params on top of the
// activation every hook of a call shares.
type paramsActivation struct {
	vars   *celVars
	params map[string]string
}

var _ interpreter.Activation = paramsActivation{}

func (p paramsActivation) ResolveName(name string) (any, bool) {
	if name == "params" {
		return ref.Val(types.NewStringStringMap(types.DefaultTypeAdapter, p.params)), true
	}
	return p.vars.ResolveName(name)
}

func (p paramsActivation) Parent() interpreter.Activation { return nil }

// largestParam is the size of the largest key, value or the map itself.
func largestParam(params map[string]string) uint64 {
	m := uint64(len(params))
	for k, v := range params {
		m = max(m, uint64(len(k)), uint64(len(v)))
	}
	return m
}
