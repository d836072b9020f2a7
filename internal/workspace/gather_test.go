package workspace

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// fakeObjects is an in-memory Objects.
type fakeObjects struct {
	skills     []v1alpha1.Skill
	extensions []v1alpha1.Extension
	labels     map[string]map[string]string
	configMaps map[string]map[string]string
	cmLabels   map[string]map[string]string
}

func (f *fakeObjects) Skills(_ context.Context, ns string) ([]v1alpha1.Skill, error) {
	return filter(f.skills, func(s v1alpha1.Skill) bool { return s.Namespace == ns }), nil
}
func (f *fakeObjects) Templates(context.Context, string) ([]v1alpha1.Template, error) {
	return nil, nil
}
func (f *fakeObjects) Extensions(_ context.Context, ns string) ([]v1alpha1.Extension, error) {
	return filter(f.extensions, func(e v1alpha1.Extension) bool { return e.Namespace == ns }), nil
}

// NamespaceLabels gives the platform namespace the label an installation
// sets, unless the test says otherwise.
func (f *fakeObjects) NamespaceLabels(_ context.Context, ns string) (map[string]string, error) {
	if l, ok := f.labels[ns]; ok || ns != "loadout-system" {
		return l, nil
	}
	return map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}, nil
}
func (f *fakeObjects) ConfigMapData(_ context.Context, ns, name string) (map[string]string, map[string]string, bool, error) {
	d, ok := f.configMaps[ns+"/"+name]
	return d, f.cmLabels[ns+"/"+name], ok, nil
}

func filter[T any](items []T, keep func(T) bool) []T {
	var out []T
	for _, i := range items {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

var policy = Policy{PlatformNamespaces: []string{"loadout-system"}, DefaultTrust: vocab.TrustRestricted}

// workspaceIn is a Workspace named dev in namespace ns, with spec when
// one is given.
func workspaceIn(ns string, spec ...v1alpha1.WorkspaceSpec) *v1alpha1.Workspace {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}}
	if len(spec) > 0 {
		ws.Spec = spec[0]
	}
	return ws
}

// gatherIn is Gather as Resolve runs it: under the platform's policy for
// ws's namespace, with the tests' policy.
func gatherIn(ws *v1alpha1.Workspace, objs Objects) (*Plan, error) {
	ctx := context.Background()
	platform, err := PlatformPolicyOf(ctx, ws.Namespace, objs, policy, HostLoader{})
	if err != nil {
		return nil, err
	}
	return Gather(ctx, ws, objs, policy, platform)
}

// resolve is the pipeline as the controller runs it: the platform's policy
// for ws's namespace, then Resolve, with the tests' policy.
func resolve(ctx context.Context, ws *v1alpha1.Workspace, objs Objects, loader ExtensionLoader) (*Resolution, error) {
	platform, err := PlatformPolicyOf(ctx, ws.Namespace, objs, policy, loader)
	if err != nil {
		return nil, err
	}
	return Resolve(ctx, ws, objs, policy, platform, loader)
}

// mustGather is Gather of ws over objs with the tests' policy; it fails t
// on an error.
func mustGather(t testing.TB, ws *v1alpha1.Workspace, objs Objects) *Plan {
	t.Helper()
	plan, err := gatherIn(ws, objs)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func ext(ns, name string) v1alpha1.Extension {
	return v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func sk(ns, name string) v1alpha1.Skill {
	return v1alpha1.Skill{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.SkillSpec{Description: "d", Body: "b"}}
}

// Extension ids do not follow layer precedence: platform extensions load
// first, so a project cannot pre-empt a platform policy (rule R-EXT-2, R-EXT-4).
func TestGather_PlatformExtensionsLoadFirstWhateverTheRootOrder(t *testing.T) {
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{ext("team", "guard"), ext("team", "aaa"), ext("loadout-system", "guard")},
		labels:     map[string]map[string]string{"team": {vocab.TrustLabel: "trusted"}},
	}
	ws := workspaceIn("team")
	plan := mustGather(t, ws, objs)
	var got []string
	for _, c := range plan.Extensions {
		got = append(got, c.Extension.Namespace+"/"+c.Extension.Name)
	}
	if want := []string{"loadout-system/guard", "team/aaa", "team/guard"}; !slices.Equal(got, want) {
		t.Errorf("load order %v, want %v", got, want)
	}
	_, outcomes := HostLoader{}.LoadExtensions(context.Background(), plan.Input.Workspace, plan)
	if outcomes[0].State != vocab.ExtensionLoaded || outcomes[2].State != vocab.ExtensionRejected {
		t.Errorf("outcomes %+v: the platform guard must load and the project guard be rejected", outcomes)
	}
}

// An untrusted namespace contributes no skills, and its extensions are listed
// only to be skipped (rule R-EXT-1, R-EXT-4).
func TestGather_UntrustedNamespaceIgnoresDataAndSkipsExtensions(t *testing.T) {
	objs := &fakeObjects{
		skills:     []v1alpha1.Skill{sk("team", "notes"), sk("loadout-system", "rules")},
		extensions: []v1alpha1.Extension{ext("team", "tool")},
		labels:     map[string]map[string]string{"team": {vocab.TrustLabel: "untrusted"}},
	}
	ws := workspaceIn("team")
	plan := mustGather(t, ws, objs)
	if len(plan.Input.Roots) != 2 || len(plan.Input.Roots[0].Skills) != 0 || len(plan.Input.Roots[1].Skills) != 1 {
		t.Errorf("roots %+v: want an empty project root and the platform skill", plan.Input.Roots)
	}
	if len(plan.Extensions) != 1 || plan.Extensions[0].Trusted {
		t.Errorf("extensions %+v: want the project extension, untrusted", plan.Extensions)
	}
}

func TestGather_RootSelectorFiltersObjects(t *testing.T) {
	labelled := sk("team", "picked")
	labelled.Labels = map[string]string{"pick": "yes"}
	objs := &fakeObjects{skills: []v1alpha1.Skill{labelled, sk("team", "other")}}
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project",
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pick": "yes"}}}}})
	plan := mustGather(t, ws, objs)
	if skills := plan.Input.Roots[0].Skills; len(skills) != 1 || skills[0].Name != "picked" {
		t.Errorf("skills %+v, want only the selected one", skills)
	}
}

func TestGather_InstructionsOrderAndErrors(t *testing.T) {
	objs := &fakeObjects{configMaps: map[string]map[string]string{"loadout-system/rules": {"AGENTS.md": "PLATFORM RULES"}},
		cmLabels: map[string]map[string]string{"loadout-system/rules": {vocab.InstructionsLabel: "true"}}}
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Instructions: []v1alpha1.InstructionSource{
		{Inline: "INLINE"},
		{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: "loadout-system", Name: "rules"}},
	}})
	plan := mustGather(t, ws, objs)
	if got := plan.Input.Instructions; len(got) != 2 || got[0].Body != "INLINE" || got[1].Body != "PLATFORM RULES" {
		t.Errorf("instructions %+v", got)
	}

	ws.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "missing"}}}
	_, err := gatherIn(ws, objs)
	var notFound *InstructionsNotFoundError
	if !errors.As(err, &notFound) {
		t.Errorf("missing ConfigMap: %v, want InstructionsNotFoundError", err)
	}

	ws.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: "other-team", Name: "rules"}}}
	_, err = gatherIn(ws, objs)
	var refused *RootNotPermittedError
	if !errors.As(err, &refused) {
		t.Errorf("foreign ConfigMap: %v, want RootNotPermittedError", err)
	}
}

// TestGather_PlatformConfigMapWithoutOptInLabelReadsAsMissing: a tenant's
// Workspace aimed at a platform ConfigMap without the label
// loadout.dev/instructions: "true" gets exactly the error of a ConfigMap that
// does not exist, so it reads nothing and learns nothing; its own
// namespace's ConfigMaps need no label.
func TestGather_PlatformConfigMapWithoutOptInLabelReadsAsMissing(t *testing.T) {
	objs := &fakeObjects{configMaps: map[string]map[string]string{
		"loadout-system/kubeadm-config": {"AGENTS.md": "PLATFORM SECRET"},
		"loadout-system/labelled-false": {"AGENTS.md": "PLATFORM SECRET"},
		"team/own":                      {"AGENTS.md": "OWN"},
	}, cmLabels: map[string]map[string]string{"loadout-system/labelled-false": {vocab.InstructionsLabel: "false"}}}
	gather := func(ns, name string) (string, error) {
		ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Instructions: []v1alpha1.InstructionSource{
			{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: ns, Name: name}}}})
		plan, err := gatherIn(ws, objs)
		if err != nil {
			return "", err
		}
		return plan.Input.Instructions[0].Body, nil
	}
	_, missing := gather("loadout-system", "does-not-exist")
	for _, name := range []string{"kubeadm-config", "labelled-false"} {
		body, err := gather("loadout-system", name)
		var notFound *InstructionsNotFoundError
		if !errors.As(err, &notFound) || body != "" {
			t.Fatalf("%s: %q, %v; want InstructionsNotFound", name, body, err)
		}
		if want := strings.ReplaceAll(missing.Error(), "does-not-exist", name); err.Error() != want {
			t.Errorf("%s: error %q differs from a missing ConfigMap's %q", name, err, want)
		}
	}
	if body, err := gather("", "own"); err != nil || body != "OWN" {
		t.Errorf("own namespace: %q, %v", body, err)
	}
}

// The platform list only names namespaces; the trust label, which only trust
// admins may set, says a listed one is really the platform's. A listed
// namespace without a valid label (a tenant created it before the platform
// did) is untrusted, whatever --default-trust says; with one, its level is
// the label's, as for any namespace.
func TestTrustOf_PlatformNamespaceCountsOnlyWithItsLabel(t *testing.T) {
	pol := Policy{PlatformNamespaces: []string{"loadout-system"}, DefaultTrust: vocab.TrustTrusted}
	for _, tc := range []struct {
		ns, label  string
		want       vocab.TrustLevel
		unlabelled bool
	}{
		{"loadout-system", "trusted", vocab.TrustTrusted, false},
		{"loadout-system", "restricted", vocab.TrustRestricted, false},
		{"loadout-system", "untrusted", vocab.TrustUntrusted, false},
		{"loadout-system", "", vocab.TrustUntrusted, true},
		{"loadout-system", "Trusted", vocab.TrustUntrusted, true},
		{"team", "", vocab.TrustTrusted, false}, // the default, for a project namespace
		{"team", "restricted", vocab.TrustRestricted, false},
	} {
		var labels map[string]string
		if tc.label != "" {
			labels = map[string]string{vocab.TrustLabel: tc.label}
		}
		if got := pol.TrustOf(tc.ns, labels); got != tc.want {
			t.Errorf("TrustOf(%s, %q) = %s, want %s", tc.ns, tc.label, got, tc.want)
		}
		if got := pol.UnlabelledPlatform(tc.ns, labels); got != tc.unlabelled {
			t.Errorf("UnlabelledPlatform(%s, %q) = %v, want %v", tc.ns, tc.label, got, tc.unlabelled)
		}
	}
}

// A platform namespace without its label contributes nothing (skills,
// opted-in instructions, extensions), and the plan names it so the
// Workspace can say why.
func TestGather_UnlabelledPlatformNamespaceLoadsNothingAndIsNamed(t *testing.T) {
	objs := &fakeObjects{
		skills:     []v1alpha1.Skill{sk("team", "notes"), sk("loadout-system", "lure")},
		extensions: []v1alpha1.Extension{ext("loadout-system", "lure-ext")},
		labels:     map[string]map[string]string{"loadout-system": {"team": "x"}},
		configMaps: map[string]map[string]string{"loadout-system/rules": {"AGENTS.md": "LURE"}},
		cmLabels:   map[string]map[string]string{"loadout-system/rules": {vocab.InstructionsLabel: "true"}},
	}
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Instructions: []v1alpha1.InstructionSource{
		{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Namespace: "loadout-system", Name: "rules"}}}})
	plan := mustGather(t, ws, objs)
	if !slices.Equal(plan.UnlabelledPlatform, []string{"loadout-system"}) {
		t.Errorf("UnlabelledPlatform = %v, want [loadout-system]", plan.UnlabelledPlatform)
	}
	// Default roots: [team, loadout-system].
	if r := plan.Input.Roots; len(r) != 2 || len(r[0].Skills) != 1 || len(r[1].Skills) != 0 {
		t.Errorf("roots %+v, want the team's skill only", r)
	}
	if len(plan.Input.Instructions) != 0 {
		t.Errorf("instructions from the unlabelled platform namespace were read: %+v", plan.Input.Instructions)
	}
	if len(plan.Extensions) != 0 {
		t.Errorf("extensions = %+v, want none: an unlabelled platform namespace imposes and lists nothing", plan.Extensions)
	}
	// Labelled, the same namespace is the platform's, and nothing is named.
	objs.labels["loadout-system"] = map[string]string{vocab.TrustLabel: "trusted"}
	plan = mustGather(t, ws, objs)
	if len(plan.UnlabelledPlatform) != 0 || len(plan.Input.Instructions) != 1 || !plan.Extensions[0].Trusted {
		t.Errorf("labelled platform namespace: unlabelled %v, %d instructions, extensions %+v", plan.UnlabelledPlatform, len(plan.Input.Instructions), plan.Extensions)
	}
}
