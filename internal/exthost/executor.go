package exthost

import (
	"context"
	"fmt"
)

// Execute runs one tool call under SPEC §7: the permission policy, then before
// hooks in registration order (the first denial or failure blocks the call
// with a paired result), then the core exactly once, then after hooks, which
// only observe. The caller gets a deep copy of the core's result.
func (h *Host) Execute(ctx context.Context, call ToolCall, core CoreFunc) (ToolResult, []Diagnostic) {
	reg := h.reg.Load() // one registry generation for the whole call
	if blocked, diags := h.before(ctx, reg, call); blocked != nil {
		return *blocked, diags
	}
	result := runCore(ctx, call, core)
	diags := h.after(ctx, reg, call, result)
	return result.deepCopy(), diags
}

// Before runs the permission policy and the before hooks for a call whose
// core runs elsewhere (hostd: the agent runs the tool). A nil result means the
// call may proceed; otherwise it is the paired blocked result to return.
func (h *Host) Before(ctx context.Context, call ToolCall) (*ToolResult, []Diagnostic) {
	return h.before(ctx, h.reg.Load(), call)
}

// After runs the after hooks on a result the agent obtained itself. Their
// failures and audit findings come back as diagnostics; nothing can change
// the result. A denied tool never ran, so it triggers no after hook.
func (h *Host) After(ctx context.Context, call ToolCall, result ToolResult) []Diagnostic {
	if h.denied(call.Name) {
		return nil
	}
	return h.after(ctx, h.reg.Load(), call, result)
}

func (h *Host) before(ctx context.Context, reg *registry, call ToolCall) (*ToolResult, []Diagnostic) {
	if h.denied(call.Name) {
		r := blockedResult(call, fmt.Sprintf("tool %q is denied by the Workspace's policy", call.Name),
			map[string]any{"policy": "deny"})
		return &r, nil
	}
	var shared *ToolCall // one copy for all built-in handlers, made on first need
	for _, b := range reg.before {
		if !b.matches(call.Name) {
			continue
		}
		in := Input{Event: eventBefore, Workspace: h.workspace}
		in.Call, shared = h.callFor(b, call, shared)
		v, diag := runHook(ctx, b, in)
		if diag != nil {
			r := blockedResult(call, fmt.Sprintf("hook %s/%s failed (%s): the call is blocked", b.extension, b.hook.Name, diag.Kind),
				map[string]any{"extension": b.extension, "hook": b.hook.Name, "failure": string(diag.Kind), "error": diag.Message})
			return &r, []Diagnostic{*diag}
		}
		if !v.Allowed {
			r := blockedResult(call, v.Message,
				map[string]any{"extension": b.extension, "hook": b.hook.Name})
			return &r, nil
		}
	}
	return nil, nil
}

func (h *Host) after(ctx context.Context, reg *registry, call ToolCall, result ToolResult) []Diagnostic {
	var diags []Diagnostic
	var shared *ToolCall
	var sharedResult *ToolResult
	for _, b := range reg.after {
		if !b.matches(call.Name) {
			continue
		}
		in := Input{Event: eventAfter, Workspace: h.workspace}
		in.Call, shared = h.callFor(b, call, shared)
		if _, ok := b.hook.Handler.(builtinHandler); ok {
			if sharedResult == nil {
				r := result.deepCopy()
				sharedResult = &r
			}
			in.Result = sharedResult
		} else {
			r := result.deepCopy()
			in.Result = &r
		}
		v, diag := runHook(ctx, b, in)
		switch {
		case diag != nil:
			diags = append(diags, *diag)
		case !v.Allowed:
			diags = append(diags, Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticAudit, Message: v.Message})
		}
	}
	return diags
}

// callFor gives a hook its copy of the call: built-in handlers cannot mutate
// it and share one, any other handler gets its own.
func (h *Host) callFor(b boundHook, call ToolCall, shared *ToolCall) (ToolCall, *ToolCall) {
	if _, ok := b.hook.Handler.(builtinHandler); !ok {
		return call.deepCopy(), shared
	}
	if shared == nil {
		c := call.deepCopy()
		shared = &c
	}
	return *shared, shared
}

// blockedResult is the result paired with a call that did not run (SPEC R-HK-2).
func blockedResult(call ToolCall, reason string, details map[string]any) ToolResult {
	details["blocked"] = true
	details["reason"] = reason
	return ToolResult{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		IsError:    true,
		Content:    []Content{{Type: "text", Text: reason}},
		Details:    details,
	}
}

// runCore calls the tool once with its own copy of the call. A core error or
// panic becomes an error result paired with the call, as the agent would show
// a failed tool; a result missing its pairing gets it.
func runCore(ctx context.Context, call ToolCall, core CoreFunc) (result ToolResult) {
	defer func() {
		if r := recover(); r != nil {
			result = errorResult(call, fmt.Sprintf("tool panicked: %v", r))
		}
	}()
	result, err := core(ctx, call.deepCopy())
	if err != nil {
		return errorResult(call, err.Error())
	}
	if result.ToolCallID == "" {
		result.ToolCallID = call.ID
	}
	if result.ToolName == "" {
		result.ToolName = call.Name
	}
	return result
}

func errorResult(call ToolCall, msg string) ToolResult {
	return ToolResult{ToolCallID: call.ID, ToolName: call.Name, IsError: true, Content: []Content{{Type: "text", Text: msg}}}
}
