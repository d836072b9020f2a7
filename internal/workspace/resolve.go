package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
)

// Phase is the step of the pipeline an invalid input was found in.
type Phase string

// The phases of Resolve, in order.
const (
	// PhaseGather reads what the Workspace reads under the trust policy.
	PhaseGather Phase = "Gather"
	// PhaseLoad loads the visible extensions into the tool registry (the
	// imposed ones prepared by the platform's policy are only committed).
	PhaseLoad Phase = "Load"
	// PhaseResolve resolves the catalog and activates skills.
	PhaseResolve Phase = "Resolve"
	// PhaseRender renders and encodes the ConfigMap data within the budget.
	PhaseRender Phase = "Render"
)

// Failure is an input the user must fix: the Workspace keeps its last good
// context and its conditions say why. Reason is a v1alpha1 condition reason.
type Failure struct {
	Phase  Phase
	Reason vocab.ConditionReason
	Err    error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Resolution is what one pass of the pipeline decided for a Workspace.
type Resolution struct {
	// Plan is what was gathered; nil when gathering failed.
	Plan *Plan
	// Extensions is the outcome of every visible extension, in load order.
	Extensions []exthost.Outcome
	// Registry is the tool registry the extensions built.
	Registry contract.Registry
	// Result is the context; nil when the catalog did not resolve or render.
	Result *resources.Result
	// Failure, when set, is why Result must not be published: the last good
	// context stays. A Result with a Failure (an extension was rejected)
	// still describes the catalog that resolved.
	Failure *Failure
	// RetrySoon is set when a trusted extension's manifest could not be
	// fetched: its Service may come back without any object changing.
	RetrySoon bool
}

// Publishable reports whether Result may replace the published context.
func (r *Resolution) Publishable() bool { return r.Failure == nil && r.Result != nil }

// Resolve runs the whole pipeline for one Workspace under the platform's
// policy for its namespace (PlatformPolicyOf): gather → load extensions →
// resolve → render. The platform's imposed extensions come prepared from
// its policy: the load commits them and imports only what the roots bring
// (HostLoader), in the one load order, so collisions and outcomes are the
// same as if everything were loaded here. The context carries platform's
// digest; Decide then chooses what to publish. The controller and
// `loadout preview` both call it, so preview prints exactly what the
// controller publishes and refuses exactly what it refuses.
//
// An invalid input is a Resolution with a Failure, tagged with its phase and
// reason. The hold rule is part of it: a rejected trusted extension keeps the
// last good context, because publishing without it would silently drop its
// policy hooks (failing open). The returned error is transient only (a read
// that failed, a deadline): retry it, and do not touch the conditions that
// describe the last completed pass.
func Resolve(ctx context.Context, ws *v1alpha1.Workspace, objs Objects, pol Policy, platform *Platform, loader ExtensionLoader) (*Resolution, error) {
	res := &Resolution{}
	plan, err := Gather(ctx, ws, objs, pol, platform)
	if err != nil {
		return invalid(res, PhaseGather, err)
	}
	res.Plan = plan
	res.Registry, res.Extensions = loader.LoadExtensions(ctx, plan.Input.Workspace, plan)
	res.Registry.Sandbox = plan.Sandbox
	res.Registry.SkillSigners = plan.SkillSigners
	plan.Input.Registry = res.Registry
	if res.Result, err = resources.Render(plan.Input); err != nil {
		phase := PhaseResolve
		var tooLarge *resources.TooLargeError
		if errors.As(err, &tooLarge) {
			phase = PhaseRender
		}
		return invalid(res, phase, err)
	}
	for _, o := range res.Extensions {
		if o.State != vocab.ExtensionRejected {
			continue
		}
		if res.Failure == nil {
			res.Failure = &Failure{Phase: PhaseLoad, Reason: vocab.ReasonExtensionRejected,
				Err: fmt.Errorf("extension %s/%s was rejected: %s", o.Namespace, o.Extension, o.Message)}
		}
		if o.Reason == exthost.ReasonImportFailed {
			res.RetrySoon = true
		}
	}
	if err := checkContent(res, platform); err != nil {
		return nil, err
	}
	return res, nil
}

// invalid records err as the Resolution's Failure when it is the user's to
// fix (it carries a reason). Any other error is transient and returned.
func invalid(res *Resolution, phase Phase, err error) (*Resolution, error) {
	var reasoned resources.ReasonedError
	if !errors.As(err, &reasoned) {
		return nil, err
	}
	res.Failure = &Failure{Phase: phase, Reason: reasoned.Reason(), Err: err}
	return res, nil
}
