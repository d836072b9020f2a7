package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// failingObjects fails every namespace read, as a cache or API server might.
type failingObjects struct{ *fakeObjects }

func (failingObjects) NamespaceLabels(context.Context, string) (map[string]string, error) {
	return nil, errors.New("connection refused")
}

// rejectingLoader rejects every extension with the given reason.
type rejectingLoader struct{ reason string }

func (l rejectingLoader) LoadExtensions(_ context.Context, _ contract.WorkspaceRef, plan *Plan) (contract.Registry, []exthost.Outcome) {
	var out []exthost.Outcome
	for _, c := range plan.Extensions {
		out = append(out, exthost.Outcome{Extension: c.Extension.Name, Namespace: c.Extension.Namespace,
			State: vocab.ExtensionRejected, Reason: l.reason, Message: "no"})
	}
	return contract.Registry{}, out
}

func TestResolve_EachFailureTaggedWithPhaseAndReason(t *testing.T) {
	dup := sk("team", "a")
	dup2 := sk("team", "b")
	dup2.Spec.Name = "a"
	for _, tc := range []struct {
		name       string
		ws         func(*v1alpha1.Workspace)
		objs       *fakeObjects
		loader     ExtensionLoader
		wantPhase  Phase
		wantReason vocab.ConditionReason
		wantRetry  bool
	}{
		{name: "foreign root", ws: func(w *v1alpha1.Workspace) {
			w.Spec.Roots = []v1alpha1.WorkspaceRoot{{Name: "x", Namespace: "other"}}
		}, wantPhase: PhaseGather, wantReason: vocab.ReasonRootNotPermitted},
		{name: "missing instructions", ws: func(w *v1alpha1.Workspace) {
			w.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "none"}}}
		}, wantPhase: PhaseGather, wantReason: vocab.ReasonInstructionsNotFound},
		{name: "duplicate name", objs: &fakeObjects{skills: []v1alpha1.Skill{dup, dup2}},
			wantPhase: PhaseResolve, wantReason: vocab.ReasonDuplicateName},
		{name: "activation of a missing skill", ws: func(w *v1alpha1.Workspace) {
			w.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "nothing"}}
		}, wantPhase: PhaseResolve, wantReason: vocab.ReasonActivationFailed},
		{name: "over budget", objs: &fakeObjects{skills: []v1alpha1.Skill{sk("team", "a")}}, ws: func(w *v1alpha1.Workspace) {
			w.Spec.Budget = &v1alpha1.WorkspaceBudget{MaxContextBytes: 10}
		}, wantPhase: PhaseRender, wantReason: vocab.ReasonContextTooLarge},
		{name: "rejected extension holds", objs: &fakeObjects{extensions: []v1alpha1.Extension{ext("loadout-system", "guard")}},
			loader: rejectingLoader{reason: "Invalid"}, wantPhase: PhaseLoad, wantReason: vocab.ReasonExtensionRejected},
		{name: "unreachable extension holds and retries soon", objs: &fakeObjects{extensions: []v1alpha1.Extension{ext("loadout-system", "guard")}},
			loader: rejectingLoader{reason: exthost.ReasonImportFailed}, wantPhase: PhaseLoad, wantReason: vocab.ReasonExtensionRejected, wantRetry: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspaceIn("team")
			if tc.ws != nil {
				tc.ws(ws)
			}
			objs := tc.objs
			if objs == nil {
				objs = &fakeObjects{}
			}
			loader := tc.loader
			if loader == nil {
				loader = HostLoader{}
			}
			res, err := resolve(context.Background(), ws, objs, loader)
			if err != nil {
				t.Fatalf("an invalid input came back as a transient error: %v", err)
			}
			if res.Publishable() || res.Failure == nil {
				t.Fatal("an invalid input is publishable")
			}
			if res.Failure.Phase != tc.wantPhase || res.Failure.Reason != tc.wantReason || res.RetrySoon != tc.wantRetry {
				t.Errorf("failure %s/%s retry=%v (%v), want %s/%s retry=%v", res.Failure.Phase, res.Failure.Reason, res.RetrySoon, res.Failure, tc.wantPhase, tc.wantReason, tc.wantRetry)
			}
		})
	}
}

// A read that fails is transient: Resolve returns it as an error, never as a
// Failure that would be reported as the user's to fix.
func TestResolve_FailedReadIsTransientNotAFailure(t *testing.T) {
	ws := workspaceIn("team")
	res, err := resolve(context.Background(), ws, failingObjects{&fakeObjects{}}, HostLoader{})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || res != nil {
		t.Errorf("got %+v, %v; want the read's error and no resolution", res, err)
	}
}

func TestResolve_ValidInputIsPublishable(t *testing.T) {
	ws := workspaceIn("team")
	objs := &fakeObjects{skills: []v1alpha1.Skill{sk("team", "a")}, extensions: []v1alpha1.Extension{ext("loadout-system", "guard")}}
	res, err := resolve(context.Background(), ws, objs, HostLoader{})
	if err != nil || !res.Publishable() || res.Result.Hash == "" || len(res.Extensions) != 1 {
		t.Fatalf("got %+v, %v; want a publishable result with one extension outcome", res, err)
	}
}
