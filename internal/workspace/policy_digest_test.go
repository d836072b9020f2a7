package workspace

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// policyDigestObjects is a platform with two imposed extensions (hooks, a
// message type, a prompt guide, a tool and denied tools) and a trusted tenant
// namespace with an extension of its own carrying the same kinds of entries.
func policyDigestObjects() *fakeObjects {
	platform := guard("loadout-system", "platform-guard")
	platform.Spec.PromptGuide = "Never delete trees."
	platform.Spec.MessageTypes = []v1alpha1.MessageType{{Type: "audit", InContext: true}}
	platform.Spec.Tools = []v1alpha1.ExtensionTool{{Name: "jira", Description: "File a ticket."}}
	second := ext("loadout-system", "prompt-guard")
	second.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "no-secrets", Event: vocab.UserInput, CEL: &v1alpha1.CELHook{Expression: "true"}}}
	second.Spec.DeniedTools = []v1alpha1.ToolName{"wget", "curl"}
	tenant := ext("team", "team-tools")
	tenant.Spec.PromptGuide = "Use notes."
	tenant.Spec.MessageTypes = []v1alpha1.MessageType{{Type: "note"}}
	tenant.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "rewrite", Event: vocab.BeforeToolCall, CEL: &v1alpha1.CELHook{Expression: "true"}}}
	tenant.Spec.DeniedTools = []v1alpha1.ToolName{"ssh"}
	return &fakeObjects{
		extensions: []v1alpha1.Extension{platform, second, tenant},
		labels: map[string]map[string]string{
			"loadout-system": {vocab.TrustLabel: "trusted"},
			"team":           {vocab.TrustLabel: "trusted"},
		},
	}
}

// The platform's policy is computed once per namespace (PlatformPolicyOf),
// from the namespace alone; every Workspace's context carries its digest.
// Each part of the platform's policy moves the digest; the tenant's own
// entries, its deny list and the platform's tools do not.
func TestPlatformPolicyOf_DigestMovesWithThePlatformsPolicyOnly(t *testing.T) {
	ctx := context.Background()
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "u1"},
		Spec: v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Deny: []v1alpha1.ToolName{"jira", "rm"}}}}
	digestWith := func(change func(o *fakeObjects, ws *v1alpha1.Workspace)) string {
		t.Helper()
		o, w := policyDigestObjects(), ws.DeepCopy()
		change(o, w)
		platform, err := PlatformPolicyOf(ctx, w.Namespace, o, policy, HostLoader{})
		if err != nil || platform.Broken != "" {
			t.Fatalf("PlatformPolicyOf: %v %+v", err, platform)
		}
		r, err := Resolve(ctx, w, o, policy, platform, HostLoader{})
		if err != nil || r.Failure != nil {
			t.Fatalf("Resolve: %v %v", err, r.Failure)
		}
		if len(r.Registry.Extensions) != 3 {
			t.Fatalf("registry extensions %v, want the two platform ones and team-tools", r.Registry.Extensions)
		}
		if got := r.Result.Manifest.PlatformPolicy; got != platform.Digest() {
			t.Errorf("manifest platformPolicy %q, want the platform's digest %q", got, platform.Digest())
		}
		return platform.Digest()
	}
	full := digestWith(func(*fakeObjects, *v1alpha1.Workspace) {})
	if !strings.HasPrefix(full, contract.HashPrefix) || len(full) != len(contract.HashPrefix)+64 {
		t.Errorf("digest %q is not sha256:<hex>", full)
	}
	for name, tc := range map[string]struct {
		change func(o *fakeObjects, ws *v1alpha1.Workspace)
		moves  bool
	}{
		"platform hook": {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[0].Spec.Hooks[0].CEL.Expression = "false" }, true},
		"platform denied tool": {func(o *fakeObjects, _ *v1alpha1.Workspace) {
			o.extensions[1].Spec.DeniedTools = []v1alpha1.ToolName{"curl"}
		}, true},
		"platform prompt guide": {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[0].Spec.PromptGuide = "Other." }, true},
		"platform message type": {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[0].Spec.MessageTypes[0].InContext = false }, true},
		"platform tool":         {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[0].Spec.Tools[0].Description = "Other." }, false},
		"tenant hook":           {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[2].Spec.Hooks[0].CEL.Expression = "false" }, false},
		"tenant guide":          {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[2].Spec.PromptGuide = "Other." }, false},
		"tenant denied tool":    {func(o *fakeObjects, _ *v1alpha1.Workspace) { o.extensions[2].Spec.DeniedTools = nil }, false},
		"workspace deny list":   {func(_ *fakeObjects, w *v1alpha1.Workspace) { w.Spec.Tools = nil }, false},
		"denied tools' order": {func(o *fakeObjects, _ *v1alpha1.Workspace) {
			o.extensions[1].Spec.DeniedTools = []v1alpha1.ToolName{"curl", "wget"}
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := digestWith(tc.change) != full; got != tc.moves {
				t.Errorf("digest changed %v, want %v", got, tc.moves)
			}
		})
	}
}

// A context that carries no platform policy (deny-all) has no digest, and
// a namespace with no imposed extension still has one (the empty policy):
// hostd tells "no policy yet" from "the empty policy".
func TestPlatformPolicyDigest_EmptyPolicyHasADigest(t *testing.T) {
	d := PlatformPolicyDigest(contract.Registry{}, nil, nil, nil)
	if d == "" || d != PlatformPolicyDigest(DenyAllRegistry("x"), nil, nil, nil) {
		t.Errorf("empty policy digest %q; entries of no imposed extension must not count", d)
	}
}
