package exthost

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// Execute runs one tool call under the hook rules (docs/rules.md): the permission policy, then before
// hooks in run order, the tenant's before the platform's imposed ones (the
// first denial or failure blocks the call with a paired result; rewrites
// chain), then the core exactly once on the
// call as rewritten, then the after hooks, which only observe it. An ask has
// no one to ask here and blocks. The caller gets a deep copy of the core's
// result.
func (h *Host) Execute(ctx context.Context, call ToolCall, core CoreFunc) (ToolResult, []Diagnostic) {
	res, d := h.ExecuteDecided(ctx, call, core)
	return res, d.Diagnostics
}

// Decision is what the permission policy and the before hooks made of a
// tool call (docs/hooks.md).
type Decision struct {
	// Call is the call as it runs: the agent's, every rewrite merged in.
	Call ToolCall
	// Rewritten says a hook changed the arguments.
	Rewritten bool
	// Blocked is the paired result of a call that must not run as it stands;
	// nil means run Call.
	Blocked *ToolResult
	// Verdict says which hook decided, whether it is the platform's, its
	// reason and its approval policy: the one answer hostd, the agents'
	// adapters, the ledger and `loadout test` read (verdict.Combine made
	// it). An ask (no hook denied, but one asked) has Blocked hold its
	// question: an agent with a user may ask and, on yes, run Call; a
	// headless agent returns Blocked; an ask with an approval route goes
	// to the cluster's approvers.
	Verdict     verdict.Verdict
	Diagnostics []Diagnostic
	// Flagged are the after hooks' audit findings and failures on the
	// whole result of a call that ran (also in Diagnostics): a caller that
	// cuts the result afterwards withholds it whole when any is set, since
	// a hook that would block it judged more than the agent gets.
	Flagged []Diagnostic
}

// Asks reports an ask: the call waits for a yes.
func (d Decision) Asks() bool { return d.Blocked != nil && d.Verdict.Outcome == verdict.Ask }

// Refuse blocks the call with reason, decided by no hook (cause says why);
// details are the paired result's, for the agent.
func (d *Decision) Refuse(call ToolCall, reason string, cause verdict.Cause, details map[string]any) {
	d.Deny(call, verdict.Verdict{Outcome: verdict.Deny, Reason: reason, Cause: cause}, details)
}

// Deny blocks the call on v, which must deny: the paired result carries
// v.Reason and, for the agent, details.
func (d *Decision) Deny(call ToolCall, v verdict.Verdict, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	if v.Extension != "" {
		details["extension"], details["hook"] = v.Extension, v.Hook
	}
	r := blockedResult(call, v.Reason, details)
	d.Blocked, d.Verdict = &r, v
}

// Decide runs the permission policy and the before hooks for a call whose
// core runs elsewhere (hostd: the agent runs the tool).
func (h *Host) Decide(ctx context.Context, call ToolCall) Decision {
	d, _ := h.decide(ctx, h.reg.Load(), call)
	return d
}

// Before is Decide for a caller that can only allow or block the call as
// the agent sent it: a rewrite it cannot apply blocks, so a hook that pins
// an argument is never silently dropped, and an ask blocks as it does
// headless. A nil result means the call may proceed.
func (h *Host) Before(ctx context.Context, call ToolCall) (*ToolResult, []Diagnostic) {
	d := RefuseRewrite(call, h.Decide(ctx, call))
	return d.Blocked, d.Diagnostics
}

// RefuseRewrite is d for a caller that can only allow or block call as the
// agent sent it: an allowed call the hooks rewrote is blocked, and an ask,
// which nobody can answer there, is a deny with its question as the reason.
func RefuseRewrite(call ToolCall, d Decision) Decision {
	if d.Asks() {
		d.Verdict.Outcome, d.Verdict.Cause = verdict.Deny, verdict.CauseHook
	}
	if d.Blocked == nil && d.Rewritten {
		d.Refuse(call, fmt.Sprintf("a hook rewrote the arguments of %q and this agent cannot run a rewritten call; the call is blocked", call.Name),
			verdict.CauseRewriteRefused, map[string]any{"rewritten": d.Call.Arguments})
	}
	return d
}

// After runs the after hooks on a result the agent obtained itself, and the
// ToolFailure hooks too when the result is an error. Their failures and audit
// findings come back as diagnostics; nothing can change the result. A denied
// tool never ran, so it triggers no after hook.
func (h *Host) After(ctx context.Context, call ToolCall, result ToolResult) []Diagnostic {
	if h.denied(call.Name) {
		return nil
	}
	r := result.deepCopy()
	return h.after(ctx, h.reg.Load(), newView(ctx, call, h.workspace), &r)
}

// Observed reports whether any after hook (AfterToolResult or ToolFailure)
// runs for a call of tool, matched as the hooks match it. An agent whose
// before answer says no may skip reporting the result: After would run
// nothing. A denied tool never runs, so nothing observes it.
func (h *Host) Observed(tool string) bool {
	if h.denied(tool) {
		return false
	}
	reg := h.reg.Load()
	for _, event := range []vocab.HookEvent{vocab.AfterToolResult, vocab.ToolFailure} {
		for _, b := range reg.byEvent[event] {
			if b.matches(tool) {
				return true
			}
		}
	}
	return false
}

// ExecuteDecided is Execute that also returns the before hooks' decision:
// what ran (Call) or why nothing did.
func (h *Host) ExecuteDecided(ctx context.Context, call ToolCall, core CoreFunc) (ToolResult, Decision) {
	reg := h.reg.Load() // one registry generation for the whole call
	d, v := h.decide(ctx, reg, call)
	if d.Blocked != nil {
		return *d.Blocked, d
	}
	return h.run(ctx, reg, v, d, core)
}

// run runs the core once on d.Call, then the after hooks.
func (h *Host) run(ctx context.Context, reg *registry, v *view, d Decision, core CoreFunc) (ToolResult, Decision) {
	result := runCore(ctx, d.Call, core).deepCopy()
	// Built-in after hooks read result in place and are done before it is
	// returned; every other hook gets its own copy. Either way no hook holds
	// memory the caller gets.
	d.Flagged = h.after(ctx, reg, v, &result)
	d.Diagnostics = append(d.Diagnostics, d.Flagged...)
	return result, d
}

func (h *Host) decide(ctx context.Context, reg *registry, call ToolCall) (Decision, *view) {
	d := Decision{Call: call}
	v := newView(ctx, call, h.workspace)
	if h.denied(call.Name) {
		d.Refuse(call, fmt.Sprintf("tool %q is denied by the Workspace's policy", call.Name), verdict.CauseDeniedTool, map[string]any{"policy": "deny"})
		return d, v
	}
	// acc is the hooks' verdict so far, combined by the one rule
	// (verdict.Combine); asked is the first hook that asked, by index
	// (taking b's address would move every iteration's copy to the heap),
	// for the rewrite check below.
	var acc verdict.Verdict
	asked := -1
	before := reg.byEvent[eventBefore]
	for i, b := range before {
		if !b.matches(call.Name) {
			continue
		}
		hv, diag := runHook(ctx, b, v.input(b))
		if diag != nil {
			d.Diagnostics = append(d.Diagnostics, *diag)
			d.Deny(call, verdict.Combine(acc, b.verdict(verdict.Deny, fmt.Sprintf("hook %s/%s failed (%s): the call is blocked", b.extension, b.hook.Name, diag.Kind), verdict.CauseHookFailure)),
				map[string]any{"failure": string(diag.Kind), "error": diag.Message})
			return d, v
		}
		if !hv.Allowed {
			// A deny is final: later hooks do not run.
			d.Deny(call, verdict.Combine(acc, b.verdict(verdict.Deny, hv.Message, verdict.CauseHook)), nil)
			return d, v
		}
		if hv.Ask {
			acc = verdict.Combine(acc, b.verdict(verdict.Ask, hv.Message, ""))
			if asked < 0 {
				asked = i
			}
		}
		if hv.Arguments != nil {
			// Later hooks, the core and the after hooks see the rewritten call.
			next := d.Call.merged(hv.Arguments)
			if asked >= 0 && asked < i && !reflect.DeepEqual(next.Arguments, d.Call.Arguments) {
				// An ask answers for the exact call that runs: a hook
				// that asked about one call must not see its yes spent
				// on another (docs/hooks.md, "Order").
				a := before[asked]
				d.Deny(call, b.verdict(verdict.Deny, fmt.Sprintf("hook %s/%s rewrote the call after hook %s/%s asked about it, so the question would not be about the call that runs; the call is blocked",
					b.extension, b.hook.Name, a.extension, a.hook.Name), verdict.CauseRewroteAfterAsk),
					map[string]any{"askedBy": a.extension + "/" + a.hook.Name})
				return d, v
			}
			d.Call = next
			d.Rewritten = true
			v = newView(ctx, d.Call, h.workspace)
		}
	}
	if schema := reg.schemas[call.Name]; d.Rewritten && schema != nil {
		if err := schema.Validate(d.Call.Arguments); err != nil {
			d.Refuse(call, fmt.Sprintf("hooks rewrote the arguments of tool %q into ones its input schema refuses: %s", call.Name, err),
				verdict.CauseInvalidArguments, map[string]any{"invalidArguments": err.Error(), "rewritten": d.Call.Arguments})
			return d, v
		}
	}
	if acc.Outcome == verdict.Ask {
		r := blockedResult(call, acc.Reason, map[string]any{"extension": acc.Extension, "hook": acc.Hook, "ask": true})
		d.Blocked, d.Verdict = &r, acc
	}
	return d, v
}

// verdict is what hook b said, as the verdict it would decide the call by.
func (b boundHook) verdict(o verdict.Outcome, reason string, cause verdict.Cause) verdict.Verdict {
	return verdict.Verdict{Outcome: o, Extension: b.extension, Hook: b.hook.Name, Imposed: b.imposed, Reason: reason, Cause: cause, Approval: b.hook.Approval}
}

// after runs the after hooks and, for an error result, the ToolFailure
// hooks; result must be the host's own copy.
func (h *Host) after(ctx context.Context, reg *registry, v *view, result *ToolResult) []Diagnostic {
	var diags []Diagnostic
	v.setResult(result)
	hooks := reg.byEvent[eventAfter]
	if result.IsError {
		hooks = append(slices.Clip(hooks), reg.byEvent[vocab.ToolFailure]...)
	}
	for _, b := range hooks {
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
	rt     Runtime // the session and cwd the caller's context carries
	result *ToolResult
	shared *Input
}

func newView(ctx context.Context, call ToolCall, ws WorkspaceInfo) *view {
	return &view{call: call, ws: ws, rt: RuntimeOf(ctx)}
}

func (v *view) setResult(r *ToolResult) {
	v.result = r
	if v.shared != nil {
		v.shared.Result = r
	}
}

// input is the hook's input; its Event is the hook's own (AfterToolResult
// and ToolFailure hooks share one result).
func (v *view) input(b boundHook) Input {
	event := b.hook.Event
	if _, ok := b.hook.Handler.(builtinHandler); ok {
		if v.shared == nil {
			v.shared = &Input{Call: v.call.deepCopy(), Result: v.result, Workspace: v.ws, Session: v.rt.Session, Cwd: v.rt.Cwd}
			v.shared.vars = newCELVars(v.shared)
		}
		in := *v.shared
		in.Event = event
		return in
	}
	in := Input{Event: event, Call: v.call.deepCopy(), Workspace: v.ws, Session: v.rt.Session, Cwd: v.rt.Cwd}
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
