package workspace

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

func TestReadsOf_NamespacesConfigMapsAndRefusals(t *testing.T) {
	pick := &metav1.LabelSelector{MatchLabels: map[string]string{"pick": "yes"}}
	for _, tc := range []struct {
		name           string
		spec           v1alpha1.WorkspaceSpec
		wantNamespaces []string
		wantConfigMaps []string
		wantRefused    bool
	}{
		{name: "default roots are own then platform", wantNamespaces: []string{"team", "loadout-system"}},
		{name: "a project-only Workspace still reads the platform namespace (imposed extensions)",
			spec:           v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}},
			wantNamespaces: []string{"team", "loadout-system"}},
		{name: "a platform-only Workspace still reads its own namespace (its labels select imposed extensions)",
			spec:           v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "platform", Namespace: "loadout-system"}}},
			wantNamespaces: []string{"loadout-system", "team"}},
		{name: "explicit roots fill in the own namespace",
			spec:           v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "platform", Namespace: "loadout-system"}, {Name: "project"}}},
			wantNamespaces: []string{"loadout-system", "team"}},
		{name: "a foreign root is refused and left out",
			spec:           v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}, {Name: "other", Namespace: "other-team"}}},
			wantNamespaces: []string{"team", "loadout-system"}, wantRefused: true},
		{name: "instructions add their namespaces and ConfigMaps",
			spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "platform", Namespace: "loadout-system", Selector: pick}},
				Instructions: []v1alpha1.InstructionSource{{Inline: "x"}, {ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: "loadout-system", Name: "rules"}}}},
			wantNamespaces: []string{"loadout-system", "team"}, wantConfigMaps: []string{"loadout-system/rules"}},
		{name: "a foreign instructions ConfigMap is refused and not indexed",
			spec:           v1alpha1.WorkspaceSpec{Instructions: []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: "other-team", Name: "rules"}}}},
			wantNamespaces: []string{"team", "loadout-system"}, wantRefused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspaceIn("team", tc.spec)
			r := ReadsOf(ws, policy)
			if got := r.Namespaces(); !slices.Equal(got, tc.wantNamespaces) {
				t.Errorf("namespaces %v, want %v", got, tc.wantNamespaces)
			}
			if got := r.ConfigMaps(); !slices.Equal(got, tc.wantConfigMaps) {
				t.Errorf("ConfigMaps %v, want %v", got, tc.wantConfigMaps)
			}
			var refused *RootNotPermittedError
			if got := errors.As(r.Refused, &refused); got != tc.wantRefused {
				t.Errorf("refused %v, want refused=%v", r.Refused, tc.wantRefused)
			}
		})
	}
}

// The index and Gather answer from the same Reads: every object Gather puts
// into a root is one that Selects maps to the Workspace, and every object it
// leaves out of the roots is not (it would cost a reconcile for nothing).
func TestReads_SelectsExactlyWhatGatherReads(t *testing.T) {
	picked := sk("loadout-system", "picked")
	picked.Labels = map[string]string{"pick": "yes"}
	objs := &fakeObjects{skills: []v1alpha1.Skill{picked, sk("loadout-system", "unpicked"), sk("team", "own"), sk("elsewhere", "foreign")}}
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"},
		{Name: "platform", Namespace: "loadout-system", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pick": "yes"}}}}})
	plan := mustGather(t, ws, objs)
	gathered := map[string]bool{}
	for _, root := range plan.Input.Roots {
		for _, s := range root.Skills {
			gathered[s.Name] = true
		}
	}
	reads := ReadsOf(ws, policy)
	for _, s := range objs.skills {
		if got := reads.Selects(s.Namespace, s.Labels); got != gathered[s.Name] {
			t.Errorf("skill %s/%s: Selects %v, but Gather read it: %v", s.Namespace, s.Name, got, gathered[s.Name])
		}
	}
}

func TestReads_BrokenSelectorSelectsNothing(t *testing.T) {
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project", Selector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}}})
	if ReadsOf(ws, policy).Selects("team", map[string]string{"a": "b"}) {
		t.Error("a selector that does not parse selected an object")
	}
}
