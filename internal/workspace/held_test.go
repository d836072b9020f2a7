package workspace

import (
	"context"
	"slices"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// A tenant that names a built-in tool of its Workspace like a tool of an
// imposed extension gets that extension rejected in its own pass (rule
// R-EXT-2: the first to commit a name keeps it). The platform's policy
// loads alone, so the failure is the tenant's: the pass publishes the
// platform's current policy (policy-only here, with no last good context;
// the tenant's last good content under it otherwise), never "keep the last
// good context", which would hold the old policy until the epoch's grace
// ran out (docs/concepts.md, "Policy apart from content").
func TestDecide_ATenantToolNamedLikeAnImposedOneCannotHoldThePolicyBack(t *testing.T) {
	ctx := context.Background()
	objs := &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "guard", false, "bash")}}
	platform, err := PlatformPolicyOf(ctx, "team", objs, policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if platform.Broken != "" || !slices.Contains(platform.IDs, "guard") {
		t.Fatalf("the platform's policy does not load alone: %q %v", platform.Broken, platform.IDs)
	}
	good := workspaceIn("team", v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"read"}}})
	goodRes, err := Resolve(ctx, good, objs, policy, platform, HostLoader{})
	if err != nil || !goodRes.Publishable() {
		t.Fatalf("the Workspace without the colliding tool: %v %+v", err, goodRes.Failure)
	}

	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"read", "bash"}}})
	res, err := Resolve(ctx, ws, objs, policy, platform, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Phase != PhaseLoad {
		t.Fatalf("the colliding built-in tool did not fail the pass: %+v", res.Failure)
	}
	tenant, err := TenantPolicy(ctx, ws, objs, policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		last *LastGood
		want OutcomeKind
	}{
		{"no last good context", nil, OutcomePolicyOnly},
		{"a last good context", &LastGood{Data: goodRes.Result.Data, Annotations: map[string]string{vocab.ContextHashAnnotation: goodRes.Result.Hash}}, OutcomeHeld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Decide(ws, res, platform, tenant, tc.last)
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != tc.want {
				t.Fatalf("outcome %s, want %s: the tenant's collision held the platform's policy back", out.Kind, tc.want)
			}
			m := out.Result.Manifest
			if m.PlatformPolicy != platform.Digest() {
				t.Errorf("published platform policy %q, want the current %q", m.PlatformPolicy, platform.Digest())
			}
			if !slices.Contains(m.Extensions, "guard") || !slices.ContainsFunc(m.Tools, func(tool contract.Tool) bool {
				return tool.Name == "bash" && tool.Extension == "guard" && !tool.Builtin
			}) {
				t.Errorf("the imposed extension and its tool are not what is published: extensions %v, tools %+v", m.Extensions, m.Tools)
			}
		})
	}
}
