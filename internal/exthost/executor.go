package exthost

import (
	"context"
	"fmt"
)

// Execute runs one tool call under the hook rules (docs/rules.md): the permission policy, then before
// hooks in registration order (the first denial or failure blocks the call
// with a paired result), then the core exactly once, then after hooks, which
// only observe. The caller gets a deep copy of the core's result.
func (h *Host) Execute(ctx context.Context, call ToolCall, core CoreFunc) (ToolResult, []Diagnostic) {
	reg := h.reg.Load() // one registry generation for the whole call
	v := newView(call, h.workspace)
	if blocked, diags := h.before(ctx, reg, v); blocked != nil {
		return *blocked, diags
	}
	result := runCore(ctx, call, core).deepCopy()
	// Built-in after hooks read result in place and are done before it is
	// returned; every other hook gets its own copy. Either way no hook holds
	// memory the caller gets.
	diags := h.after(ctx, reg, v, &result)
	return result, diags
}

// Before runs the permission policy and the before hooks for a call whose
// core runs elsewhere (hostd: the agent runs the tool). A nil result means the
// call may proceed; otherwise it is the paired blocked result to return.
func (h *Host) Before(ctx context.Context, call ToolCall) (*ToolResult, []Diagnostic) {
	return h.before(ctx, h.reg.Load(), newView(call, h.workspace))
}

// After runs the after hooks on a result the agent obtained itself. Their
// failures and audit findings come back as diagnostics; nothing can change
// the result. A denied tool never ran, so it triggers no after hook.
func (h *Host) After(ctx context.Context, call ToolCall, result ToolResult) []Diagnostic {
	if h.denied(call.Name) {
		return nil
	}
	r := result.deepCopy()
	return h.after(ctx, h.reg.Load(), newView(call, h.workspace), &r)
}

func (h *Host) before(ctx context.Context, reg *registry, v *view) (*ToolResult, []Diagnostic) {
	call := v.call
	if h.denied(call.Name) {
		r := blockedResult(call, fmt.Sprintf("tool %q is denied by the Workspace's policy", call.Name),
			map[string]any{"policy": "deny"})
		return &r, nil
	}
	for _, b := range reg.before {
		if !b.matches(call.Name) {
			continue
		}
		verdict, diag := runHook(ctx, b, v.input(b))
		if diag != nil {
			r := blockedResult(call, fmt.Sprintf("hook %s/%s failed (%s): the call is blocked", b.extension, b.hook.Name, diag.Kind),
				map[string]any{"extension": b.extension, "hook": b.hook.Name, "failure": string(diag.Kind), "error": diag.Message})
			return &r, []Diagnostic{*diag}
		}
		if !verdict.Allowed {
			r := blockedResult(call, verdict.Message,
				map[string]any{"extension": b.extension, "hook": b.hook.Name})
			return &r, nil
		}
	}
	return nil, nil
}

// after runs the after hooks; result must be the host's own copy.
func (h *Host) after(ctx context.Context, reg *registry, v *view, result *ToolResult) []Diagnostic {
	var diags []Diagnostic
	v.setResult(result)
	for _, b := range reg.after {
		if !b.matches(v.call.Name) {
			continue
		}
		verdict, diag := runHook(ctx, b, v.input(b))
		switch {
		case diag != nil:
			diags = append(diags, *diag)
		case !verdict.Allowed:
			diags = append(diags, Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticAudit, Message: verdict.Message})
		}
	}
	return diags
}

// view hands out hook inputs for one call. Built-in handlers cannot mutate
// their input and run one after another, so they all share one host-owned
// copy and one CEL activation across both phases; any other handler gets a
// deep copy of its own, which it may keep after a timeout.
type view struct {
	call   ToolCall // the caller's call: read, never handed out
	ws     WorkspaceInfo
	result *ToolResult
	shared *Input
}

func newView(call ToolCall, ws WorkspaceInfo) *view { return &view{call: call, ws: ws} }

func (v *view) setResult(r *ToolResult) {
	v.result = r
	if v.shared != nil {
		v.shared.Event, v.shared.Result = eventAfter, r
	}
}

func (v *view) input(b boundHook) Input {
	event := eventBefore
	if v.result != nil {
		event = eventAfter
	}
	if _, ok := b.hook.Handler.(builtinHandler); ok {
		if v.shared == nil {
			v.shared = &Input{Event: event, Call: v.call.deepCopy(), Result: v.result, Workspace: v.ws}
			v.shared.vars = newCELVars(v.shared)
		}
		return *v.shared
	}
	in := Input{Event: event, Call: v.call.deepCopy(), Workspace: v.ws}
	if v.result != nil {
		r := v.result.deepCopy()
		in.Result = &r
	}
	return in
}

// BlockedResult is the result paired with a call that did not run (rule
// R-HK-2): the reason in content and details, details.blocked set. Callers
// that refuse a call before the hooks (hostd's argument check) use it so the
// agent sees one shape for every refusal.
func BlockedResult(call ToolCall, reason string, details map[string]any) ToolResult {
	if details == nil {
		details = map[string]any{}
	}
	return blockedResult(call, reason, details)
}

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
