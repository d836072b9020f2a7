package workspace

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// guard is a platform policy: one hook and a denied tool.
func guard(ns, name string) v1alpha1.Extension {
	e := ext(ns, name)
	e.Labels = map[string]string{"kind": "policy"}
	e.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "no-rm", Event: vocab.BeforeToolCall, CEL: &v1alpha1.CELHook{Expression: "true"}}}
	e.Spec.DeniedTools = []v1alpha1.ToolName{"curl"}
	return e
}

func enforcedNames(p *Plan) []string {
	var out []string
	for _, c := range p.Extensions {
		if c.Enforced && c.Trusted {
			out = append(out, c.Extension.Namespace+"/"+c.Extension.Name)
		}
	}
	return out
}

// A platform extension applies to every Workspace of the namespaces it
// selects, whatever the Workspace's roots, root selectors or deny lists say:
// no Workspace field removes it or its denied tools (docs/security.md,
// "Platform policy a tenant cannot strip or forge").
func TestGather_PlatformPolicyHoldsWhateverTheWorkspaceSays(t *testing.T) {
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{guard("loadout-system", "platform-guard")},
		labels: map[string]map[string]string{
			"loadout-system": {vocab.TrustLabel: "trusted"},
			"team":           {vocab.TrustLabel: "trusted"},
		},
	}
	nothing := &metav1.LabelSelector{MatchLabels: map[string]string{"matches": "nothing"}}
	for name, spec := range map[string]v1alpha1.WorkspaceSpec{
		"default roots":                      {},
		"project root only":                  {Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}},
		"platform root selecting nothing":    {Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}, {Name: "platform", Namespace: "loadout-system", Selector: nothing}}},
		"platform root first":                {Roots: []v1alpha1.WorkspaceRoot{{Name: "platform", Namespace: "loadout-system"}, {Name: "project"}}},
		"own deny list and builtins":         {Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"bash"}, Deny: []v1alpha1.ToolName{"wget"}}},
		"another output name":                {Output: &v1alpha1.WorkspaceOutput{ConfigMapName: "elsewhere"}},
		"project root with a label selector": {Roots: []v1alpha1.WorkspaceRoot{{Name: "project", Selector: nothing}}},
	} {
		t.Run(name, func(t *testing.T) {
			ws := workspaceIn("team", spec)
			plan := mustGather(t, ws, objs)
			if got := enforcedNames(plan); !slices.Equal(got, []string{"loadout-system/platform-guard"}) {
				t.Errorf("enforced extensions %v, want [loadout-system/platform-guard]", got)
			}
			if !slices.Contains(plan.Deny, "curl") {
				t.Errorf("deny %v lacks the platform's curl", plan.Deny)
			}
			if spec.Tools != nil && !slices.Contains(plan.Deny, "wget") {
				t.Errorf("deny %v lacks the Workspace's own wget: its list adds", plan.Deny)
			}
		})
	}
}

func TestGather_NamespaceSelectorDecidesWherePlatformPolicyApplies(t *testing.T) {
	scoped := guard("loadout-system", "pci-guard")
	scoped.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"compliance": "pci"}}
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{scoped},
		labels: map[string]map[string]string{
			"loadout-system": {vocab.TrustLabel: "trusted"},
			"payments":       {"compliance": "pci"},
		},
	}
	for ns, want := range map[string]bool{"payments": true, "team": false} {
		ws := workspaceIn(ns)
		plan := mustGather(t, ws, objs)
		if got := len(enforcedNames(plan)) == 1; got != want {
			t.Errorf("namespace %s: imposed %v, want %v (extensions %+v)", ns, got, want, plan.Extensions)
		}
		if got := slices.Contains(plan.Deny, "curl"); got != want {
			t.Errorf("namespace %s: curl denied %v, want %v", ns, got, want)
		}
	}
}

// An optional platform extension is offered through the roots only; one that
// carries policy is imposed even if marked optional, since manifests read by
// `loadout preview` skip the API server's validation.
func TestGather_OptionalPlatformExtensionsAreOfferedThroughRootsOnly(t *testing.T) {
	offered := ext("loadout-system", "jira-tools")
	offered.Spec.Optional = true
	sneaky := guard("loadout-system", "sneaky-guard")
	sneaky.Spec.Optional = true
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{offered, sneaky},
		labels:     map[string]map[string]string{"loadout-system": {vocab.TrustLabel: "trusted"}},
	}
	projectOnly := workspaceIn("team", v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}})
	plan := mustGather(t, projectOnly, objs)
	if got := enforcedNames(plan); !slices.Equal(got, []string{"loadout-system/sneaky-guard"}) || len(plan.Extensions) != 1 {
		t.Errorf("project-only Workspace: extensions %+v, want only sneaky-guard, imposed", plan.Extensions)
	}
	withPlatform := projectOnly.DeepCopy()
	withPlatform.Spec.Roots = nil
	plan = mustGather(t, withPlatform, objs)
	if len(plan.Extensions) != 2 || plan.Extensions[0].Extension.Name != "jira-tools" || plan.Extensions[0].Enforced {
		t.Errorf("default roots: extensions %+v, want jira-tools offered and sneaky-guard imposed", plan.Extensions)
	}
}

// A project extension cannot deny through an untrusted namespace, but a
// trusted project extension's denied tools apply like any policy it carries.
func TestGather_DeniedToolsComeOnlyFromTrustedExtensions(t *testing.T) {
	mine := guard("team", "my-guard")
	objs := &fakeObjects{extensions: []v1alpha1.Extension{mine}}
	ws := workspaceIn("team")
	plan := mustGather(t, ws, objs)
	if len(plan.Deny) != 0 {
		t.Errorf("restricted namespace: deny %v, want none (its extensions do not load)", plan.Deny)
	}
	objs.labels = map[string]map[string]string{"team": {vocab.TrustLabel: "trusted"}}
	plan = mustGather(t, ws, objs)
	if !slices.Equal(plan.Deny, []string{"curl"}) {
		t.Errorf("trusted namespace: deny %v, want [curl]", plan.Deny)
	}
}
