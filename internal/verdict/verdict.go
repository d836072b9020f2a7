// Package verdict is what the before hooks made of a tool call, as a type
// (which hook decided, whether it is the platform's, its reason and its
// approval policy), and the one rule that combines the hooks' verdicts
// (docs/hooks.md, "Combining verdicts").
//
// A verdict used to travel as a string map in the blocked result's details,
// and its readers took "extension" and "hook" back out of it: the first hook
// that asked was the one whose approval hostd looked up, so a tenant's ask,
// which runs first, hid the platform's ask-with-approval. Every reader now
// gets this type, and only Combine decides which hook speaks for a call.
package verdict

import "github.com/loadout-dev/loadout/internal/contract"

// Outcome is what a verdict says of the call.
type Outcome uint8

const (
	// Allow: the call runs (as the hooks rewrote it).
	Allow Outcome = iota
	// Ask: someone must say yes first: the agent's user, or the cluster's
	// approvers when the deciding hook is the platform's with an approval.
	Ask
	// Deny: the call does not run.
	Deny
)

func (o Outcome) String() string {
	switch o {
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	default:
		return "allow"
	}
}

// Cause says why a call is blocked: the decision ledger's reason.
type Cause string

// Causes of a blocked call.
const (
	// CauseHook: a hook denied (or asked, and nobody could say yes).
	CauseHook Cause = "hook"
	// CauseHookFailure: a hook failed (error, timeout, bad outcome).
	CauseHookFailure Cause = "hookFailure"
	// CauseDeniedTool: the Workspace's policy denies the tool.
	CauseDeniedTool Cause = "deniedTool"
	// CauseInvalidArguments: the arguments (as rewritten) fail the tool's
	// input schema.
	CauseInvalidArguments Cause = "invalidArguments"
	// CauseRewriteRefused: the hooks rewrote a call the agent cannot run
	// rewritten.
	CauseRewriteRefused Cause = "rewriteRefused"
	// CauseRewroteAfterAsk: a hook rewrote the call after another asked.
	CauseRewroteAfterAsk Cause = "rewroteAfterAsk"
	// CauseApproval: the cluster's approvers were asked and did not (yet)
	// say yes, or could not be asked.
	CauseApproval Cause = "approval"
)

// Verdict is the decision on one tool call and who made it. The zero
// Verdict allows, decided by no hook.
type Verdict struct {
	Outcome Outcome
	// Extension and Hook name the hook that decided; both empty when no
	// hook did (an allowed call, the deny list, the argument check).
	Extension, Hook string
	// Imposed: the deciding hook is the platform's (its extension is
	// imposed on the Workspace).
	Imposed bool
	// Reason is the denial's reason or the ask's question, as the agent
	// reads it.
	Reason string
	// Cause is why a denied call is blocked; empty otherwise.
	Cause Cause
	// Approval is the deciding hook's approval policy, nil when it has
	// none. Only an imposed hook's is honoured (ApprovalRoute).
	Approval *contract.HookApproval
}

// Decider is "extension/hook", or "" when no hook decided.
func (v Verdict) Decider() string {
	if v.Extension == "" && v.Hook == "" {
		return ""
	}
	return v.Extension + "/" + v.Hook
}

// ApprovalRoute is the approval policy that decides an ask: the platform's
// hook asked and names approvers. Nil means the ask is the agent's user's.
// A tenant's hook never names who approves its own calls.
func (v Verdict) ApprovalRoute() *contract.HookApproval {
	if v.Outcome != Ask || !v.Imposed || v.Approval == nil {
		return nil
	}
	return v.Approval
}

// rank orders verdicts by the one rule: a platform deny, then a tenant's
// deny, then a platform ask with an approval route, a platform ask, a
// tenant's ask, and an allow last.
func (v Verdict) rank() int {
	switch v.Outcome {
	case Deny:
		if v.Imposed {
			return 5
		}
		return 4
	case Ask:
		switch {
		case v.ApprovalRoute() != nil:
			return 3
		case v.Imposed:
			return 2
		}
		return 1
	}
	return 0
}

// Combine is the one rule that combines verdicts (docs/hooks.md,
// "Combining verdicts"): acc is the verdict of the hooks that ran so far,
// next the verdict of the hook that ran after them; the stronger wins and,
// of two equally strong, the earlier. Strength, strongest first: a
// platform deny; a tenant's deny; a platform ask with an approval route; a
// platform ask; a tenant's ask; an allow. So a platform deny beats
// everything, a platform ask with approvers is decided by them whatever a
// tenant's hook answered (its ask, which runs first, cannot hide it), and a
// tenant's ask never turns the platform's approval into the agent's own
// yes. A deny is final: the host stops running hooks once acc denies.
func Combine(acc, next Verdict) Verdict {
	if next.rank() > acc.rank() {
		return next
	}
	return acc
}
