package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestWorkspace_FixedExamplePublishesProjectWinnerAndEnforcesHooks is the fixed example (docs/rules.md)
// end to end: the project's review skill and template win, only the project
// body is in the context, review_note is in the registry, and the published
// hooks deny a SECRET note without running the core.
func TestWorkspace_FixedExamplePublishesProjectWinnerAndEnforcesHooks(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	platformReview := testenv.Skill(platformNS, "review", "Platform review rules.", "PLATFORM REVIEW BODY")
	platformReview.Name = "review-" + ns // one per test run; spec.name is what collides
	platformReview.Spec.Name = "review"
	kit.Create(t, platformReview)
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, platformReview) })
	kit.Create(t, testenv.Skill(ns, "review", "Project review rules.", "PROJECT REVIEW BODY",
		v1alpha1.SkillFile{Path: "checklist.md", Content: "CHECKLIST CONTENT"}))
	kit.Create(t, &v1alpha1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "review"},
		Spec: v1alpha1.TemplateSpec{Body: "Review {{file}} for {{owner}}. Focus on {{file}}."}})
	kit.Create(t, reviewExtension(ns))
	ws := &v1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev",
			Labels:      map[string]string{"app.kubernetes.io/instance": "argo-app", "kustomize.toolkit.fluxcd.io/name": "flux"},
			Annotations: map[string]string{"argocd.argoproj.io/tracking-id": "argo-app:loadout.dev/Workspace:x/dev"}},
		Spec: v1alpha1.WorkspaceSpec{
			Roots:    []v1alpha1.WorkspaceRoot{{Name: "project"}, {Name: "platform", Namespace: platformNS}},
			Activate: []v1alpha1.SkillActivation{{Skill: "review", Files: []string{"checklist.md"}}},
		},
	}
	kit.Create(t, ws)

	// Every input is in: one project skill shadowing the platform one, one
	// template, the extension's tool. The first reconcile may have run
	// before the cache held them all.
	kit.WaitFor(t, ns, "dev", testenv.Counted(v1alpha1.CatalogCounts{Skills: 1, Templates: 1, ActiveSkills: 1, Shadowed: 1, Extensions: 1, Tools: 1}))
	got, cm := kit.Published(t, ns, "dev")

	// Publication: controller owner, hash annotation, nothing copied from the Workspace.
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != got.UID {
		t.Errorf("ConfigMap controller reference = %+v, want Workspace %s", ref, got.UID)
	}
	if h := cm.Annotations[vocab.ContextHashAnnotation]; h == "" || h != got.Status.Context.Hash {
		t.Errorf("hash annotation %q, status hash %q", h, got.Status.Context.Hash)
	}
	for k := range cm.Labels {
		if k != vocab.WorkspaceLabel {
			t.Errorf("ConfigMap carries label %q", k)
		}
	}
	for k := range cm.Annotations {
		if k != vocab.ContextHashAnnotation {
			t.Errorf("ConfigMap carries annotation %q", k)
		}
	}

	// R-CAT-1, R-CTX-2: project wins; only its body is in the context.
	prompt := cm.Data[contract.KeySystemPrompt]
	testenv.MustContain(t, "system-prompt.md", prompt, "PROJECT REVIEW BODY", "CHECKLIST CONTENT", "review_note", "Use review_note to record findings.")
	testenv.MustNotContain(t, "system-prompt.md", prompt, "PLATFORM REVIEW BODY")
	testenv.MustNotContain(t, "manifest.json", cm.Data[contract.KeyManifest], "PLATFORM REVIEW BODY", "PROJECT REVIEW BODY")
	m := testenv.ManifestOf(t, cm)
	if len(m.Shadowed) != 1 || m.Shadowed[0].Name != "review" || !strings.Contains(m.Shadowed[0].Origin, platformNS) {
		t.Errorf("shadowed = %+v, want the platform review", m.Shadowed)
	}

	// Status: winners with origin, shadowed, extensions, the tool registry.
	if len(got.Status.Shadowed) != 1 || !strings.Contains(got.Status.Shadowed[0].ShadowedBy, ns) {
		t.Errorf("status.shadowed = %+v", got.Status.Shadowed)
	}
	if s := extensionStatesOf(got)[ns+"/review-extension"]; s != vocab.ExtensionLoaded {
		t.Errorf("review-extension state %q, want Loaded: %+v", s, got.Status.Extensions)
	}
	if len(got.Status.Tools) != 1 || got.Status.Tools[0].Name != "review_note" || got.Status.Tools[0].Extension != "review-extension" {
		t.Errorf("status.tools = %+v", got.Status.Tools)
	}

	// The published registry drives the same hook runtime hostd uses.
	host, outcomes := exthost.NewHostFromRegistry(ctx, m.Registry, exthost.WorkspaceInfo{Name: "dev", Namespace: ns}, nil)
	for _, o := range outcomes {
		if o.State != vocab.ExtensionLoaded {
			t.Fatalf("published registry does not load: %+v", o)
		}
	}
	coreCalls := 0
	core := func(_ context.Context, call exthost.ToolCall) (exthost.ToolResult, error) {
		coreCalls++
		return exthost.ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: []exthost.Content{{Type: "text", Text: "noted"}}}, nil
	}
	if res, _ := host.Execute(ctx, exthost.ToolCall{ID: "c1", Name: "review_note", Arguments: map[string]any{"text": "looks fine"}}, core); res.IsError || coreCalls != 1 {
		t.Errorf("ordinary note: result %+v, core calls %d; want allowed, 1", res, coreCalls)
	}
	res, _ := host.Execute(ctx, exthost.ToolCall{ID: "c2", Name: "review_note", Arguments: map[string]any{"text": "the SECRET is 42"}}, core)
	if !res.IsError || res.ToolCallID != "c2" || res.ToolName != "review_note" || coreCalls != 1 {
		t.Errorf("SECRET note: result %+v, core calls %d; want a paired blocked result and no core call", res, coreCalls)
	}
}

// TestWorkspace_TrustMatrix proves the trust levels of docs/security.md for every level,
// with an extension in the project namespace and one in the platform namespace.
func TestWorkspace_TrustMatrix(t *testing.T) {
	ctx := context.Background()
	platformExt := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformExtNS, Name: "platform-policy"},
		Spec: v1alpha1.ExtensionSpec{Tools: []v1alpha1.ExtensionTool{{Name: "platform_tool", Description: "A platform tool."}}}}
	kit.Create(t, platformExt)
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, platformExt) })

	cases := []struct {
		trust          vocab.TrustLevel
		projectExt     vocab.ExtensionLoadState
		projectSkill   bool
		wantToolsCount int
	}{
		{trust: vocab.TrustUntrusted, projectExt: vocab.ExtensionSkippedUntrusted, projectSkill: false, wantToolsCount: 1},
		{trust: vocab.TrustRestricted, projectExt: vocab.ExtensionSkippedUntrusted, projectSkill: true, wantToolsCount: 1},
		{trust: "", projectExt: vocab.ExtensionSkippedUntrusted, projectSkill: true, wantToolsCount: 1}, // default: restricted
		{trust: vocab.TrustTrusted, projectExt: vocab.ExtensionLoaded, projectSkill: true, wantToolsCount: 2},
		{trust: "bogus", projectExt: vocab.ExtensionSkippedUntrusted, projectSkill: true, wantToolsCount: 1}, // unknown never raises trust
	}
	for _, tc := range cases {
		t.Run("trust="+string(tc.trust), func(t *testing.T) {
			ns := kit.NewNamespace(t, tc.trust)
			kit.Create(t, testenv.Skill(ns, "project-notes", "Project notes.", "PROJECT NOTES BODY"))
			kit.Create(t, &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "project-ext"},
				Spec: v1alpha1.ExtensionSpec{Tools: []v1alpha1.ExtensionTool{{Name: "project_tool", Description: "A project tool."}}}})
			kit.Create(t, workspaceWithRoots(ns, "dev", platformExtNS))
			// Waiting on every expectation: a first reconcile may run before
			// the cache holds the project's objects.
			kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
				if err := testenv.Ready(ws); err != nil {
					return err
				}
				states := extensionStatesOf(ws)
				if s := states[platformExtNS+"/platform-policy"]; s != vocab.ExtensionLoaded {
					return fmt.Errorf("platform extension %q, want Loaded", s)
				}
				if s := states[ns+"/project-ext"]; s != tc.projectExt {
					return fmt.Errorf("project extension %q, want %q", s, tc.projectExt)
				}
				if int(ws.Status.Catalog.Tools) != tc.wantToolsCount {
					return fmt.Errorf("tools %+v, want %d", ws.Status.Tools, tc.wantToolsCount)
				}
				if tc.projectSkill {
					return testenv.Winning("skill", "project-notes")(ws)
				}
				return nil
			})
			_, cm := kit.Published(t, ns, "dev")
			prompt := cm.Data[contract.KeySystemPrompt]
			if has := strings.Contains(prompt, "project-notes"); has != tc.projectSkill {
				t.Errorf("project skill in context = %v, want %v", has, tc.projectSkill)
			}
		})
	}
}

// TestWorkspace_TrustLabelChangeReconciles: raising a namespace's trust (by
// an admin) loads its extensions without touching the Workspace.
func TestWorkspace_TrustLabelChangeReconciles(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, reviewExtension(ns))
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		if err := testenv.Ready(ws); err != nil {
			return err
		}
		return stateIs(ws, ns+"/review-extension", vocab.ExtensionSkippedUntrusted)
	})
	testenv.Update(t, kit, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(n *corev1.Namespace) {
		n.Labels[vocab.TrustLabel] = string(vocab.TrustTrusted)
	})
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		return stateIs(ws, ns+"/review-extension", vocab.ExtensionLoaded)
	})
}

// TestWorkspace_ProjectExtensionCannotPreemptPlatformExtension: a project
// extension with a platform extension's id is rejected, never the platform one.
func TestWorkspace_ProjectExtensionCannotPreemptPlatformExtension(t *testing.T) {
	ctx := context.Background()
	plat := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformOtherNS, Name: "guard-" + strings.ToLower(t.Name()[len(t.Name())-8:])},
		Spec: v1alpha1.ExtensionSpec{Name: "guard", Hooks: []v1alpha1.ExtensionHook{{Name: "deny-all", Event: vocab.BeforeToolCall, TimeoutSeconds: 1,
			CEL: &v1alpha1.CELHook{Expression: "false", Message: "platform says no"}}}}}
	kit.Create(t, plat)
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, plat) })
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guard"},
		Spec: v1alpha1.ExtensionSpec{Hooks: []v1alpha1.ExtensionHook{{Name: "allow-all", Event: vocab.BeforeToolCall, TimeoutSeconds: 1,
			CEL: &v1alpha1.CELHook{Expression: "true"}}}}})
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionExtensionsLoaded, metav1.ConditionFalse, vocab.ReasonExtensionRejected))
	if err := stateIs(got, platformOtherNS+"/guard", vocab.ExtensionLoaded); err != nil {
		t.Error(err)
	}
	if err := stateIs(got, ns+"/guard", vocab.ExtensionRejected); err != nil {
		t.Error(err)
	}
}

func stateIs(ws *v1alpha1.Workspace, key string, want vocab.ExtensionLoadState) error {
	if s := extensionStatesOf(ws)[key]; s != want {
		return &stateError{key: key, got: s, want: want, all: ws.Status.Extensions}
	}
	return nil
}

type stateError struct {
	key       string
	got, want vocab.ExtensionLoadState
	all       []v1alpha1.ExtensionState
}

func (e *stateError) Error() string {
	b, _ := json.Marshal(e.all)
	return "extension " + e.key + " is " + string(e.got) + ", want " + string(e.want) + ": " + string(b)
}

// TestWorkspace_SwappingRootOrderSwapsWinner is R-CAT-1 in the controller.
func TestWorkspace_SwappingRootOrderSwapsWinner(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	other := testenv.Skill(platformOtherNS, "swap-"+ns, "Platform swap.", "PLATFORM SWAP BODY")
	other.Spec.Name = v1alpha1.LogicalName("swap-" + ns)
	kit.Create(t, other)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), other) })
	kit.Create(t, testenv.Skill(ns, "swap-"+ns, "Project swap.", "PROJECT SWAP BODY"))
	ws := workspaceWithRoots(ns, "dev", platformOtherNS)
	ws.Spec.Activate = []v1alpha1.SkillActivation{{Skill: v1alpha1.LogicalName("swap-" + ns)}}
	kit.Create(t, ws)
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error { // both skills are in the cache
		if !slices.ContainsFunc(ws.Status.Shadowed, func(e v1alpha1.ShadowedEntry) bool { return e.Name == "swap-"+ns }) {
			return fmt.Errorf("swap-%s not shadowed yet: %+v", ns, ws.Status.Shadowed)
		}
		return testenv.Ready(ws)
	})
	_, cm := kit.Published(t, ns, "dev")
	testenv.MustContain(t, "system-prompt.md", cm.Data[contract.KeySystemPrompt], "PROJECT SWAP BODY")

	testenv.Update(t, kit, ws, func(w *v1alpha1.Workspace) { w.Spec.Roots[0], w.Spec.Roots[1] = w.Spec.Roots[1], w.Spec.Roots[0] })
	kit.WaitFor(t, ns, "dev", testenv.Ready)
	_, cm = kit.Published(t, ns, "dev")
	prompt := cm.Data[contract.KeySystemPrompt]
	testenv.MustContain(t, "system-prompt.md", prompt, "PLATFORM SWAP BODY")
	testenv.MustNotContain(t, "system-prompt.md", prompt, "PROJECT SWAP BODY")
}

// TestWorkspace_DuplicateNameInOneRootKeepsLastGoodContext is R-CAT-2: the
// error names both objects and the published context survives.
func TestWorkspace_DuplicateNameInOneRootKeepsLastGoodContext(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "lint", "Lint rules.", "LINT BODY"))
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	good := kit.WaitFor(t, ns, "dev", testenv.Winning("skill", "lint"))
	goodHash := good.Status.Context.Hash

	dup := testenv.Skill(ns, "lint-copy", "Another lint.", "OTHER LINT BODY")
	dup.Spec.Name = "lint"
	kit.Create(t, dup)
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionCatalogResolved, metav1.ConditionFalse, vocab.ReasonDuplicateName))
	msg := testenv.ConditionMessage(got, vocab.ConditionCatalogResolved)
	testenv.MustContain(t, "CatalogResolved message", msg, ns+"/lint", ns+"/lint-copy")
	if err := testenv.Condition(vocab.ConditionReady, metav1.ConditionFalse, vocab.ReasonDuplicateName)(got); err != nil {
		t.Error(err)
	}
	if got.Status.Context.Hash != goodHash {
		t.Errorf("status.context.hash changed to %s", got.Status.Context.Hash)
	}
	if h := kit.ConfigMap(t, ns, "dev-context").Annotations[vocab.ContextHashAnnotation]; h != goodHash {
		t.Errorf("published hash %s, want the last good %s", h, goodHash)
	}
	// Fixing the input publishes again.
	if err := k8sClient.Delete(context.Background(), dup); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, ns, "dev", testenv.Ready)
}

// TestWorkspace_ContextTooLargePublishesOnlyThePolicy: over budget on its
// first pass, nothing of the content is written: the context holds the
// platform's policy alone (there is no good content to keep).
func TestWorkspace_ContextTooLargePublishesOnlyThePolicy(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "big", "Big.", strings.Repeat("x", 4096)))
	ws := workspaceWithRoots(ns, "dev", platformOtherNS)
	ws.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "big"}}
	ws.Spec.Budget = &v1alpha1.WorkspaceBudget{MaxContextBytes: 2048}
	kit.Create(t, ws)
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionContextPublished, metav1.ConditionFalse, vocab.ReasonContextTooLarge))
	mustHoldPolicyOnly(t, got, strings.Repeat("x", 64))
}

// mustHoldPolicyOnly checks that ws published the platform's policy alone:
// its ConfigMap carries none of the tenant's content (absent).
func mustHoldPolicyOnly(t *testing.T, ws *v1alpha1.Workspace, absent ...string) {
	t.Helper()
	if ws.Status.HeldContent == nil || ws.Status.HeldContent.Mode != v1alpha1.HeldContentPolicyOnly {
		t.Fatalf("status.heldContent = %+v, want mode PolicyOnly", ws.Status.HeldContent)
	}
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}, cm); err != nil {
		t.Fatal(err)
	}
	for _, v := range cm.Data {
		testenv.MustNotContain(t, "the policy-only context", v, absent...)
	}
}

// TestWorkspace_ForeignConfigMapIsNotOwnedAndUntouched: a same-named
// ConfigMap the Workspace does not own is never overwritten.
func TestWorkspace_ForeignConfigMapIsNotOwnedAndUntouched(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}, Data: map[string]string{"mine": "yes"}}
	kit.Create(t, foreign)
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionContextPublished, metav1.ConditionFalse, vocab.ReasonNotOwned))
	cm := kit.ConfigMap(t, ns, "dev-context")
	if cm.ResourceVersion != foreign.ResourceVersion || len(cm.Data) != 1 || cm.Data["mine"] != "yes" {
		t.Errorf("foreign ConfigMap was modified: %+v", cm)
	}
}

// TestWorkspace_RootOutsideOwnAndPlatformNamespacesIsRefused: a tenant cannot
// read another tenant's namespace through roots.
func TestWorkspace_RootOutsideOwnAndPlatformNamespacesIsRefused(t *testing.T) {
	victim := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, testenv.Skill(victim, "secret-skill", "Victim's skill.", "VICTIM BODY"))
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}, {Name: "steal", Namespace: victim}}}})
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionCatalogResolved, metav1.ConditionFalse, vocab.ReasonRootNotPermitted))
	testenv.MustContain(t, "message", testenv.ConditionMessage(got, vocab.ConditionCatalogResolved), "spec.roots[1].namespace", victim)
	got = kit.WaitFor(t, ns, "dev", func(w *v1alpha1.Workspace) error {
		if w.Status.HeldContent == nil {
			return fmt.Errorf("no policy-only context yet")
		}
		return nil
	})
	mustHoldPolicyOnly(t, got, "VICTIM BODY", "secret-skill")
}

// TestWorkspace_InstructionsFromConfigMapFollowChanges: instructions are
// read from a ConfigMap key; a change propagates; a missing key is reported.
func TestWorkspace_InstructionsFromConfigMapFollowChanges(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	rules := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rules"}, Data: map[string]string{"AGENTS.md": "RULE ONE"}}
	kit.Create(t, rules)
	ws := workspaceWithRoots(ns, "dev", platformOtherNS)
	ws.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "rules"}}, {Inline: "INLINE RULE"}}
	kit.Create(t, ws)
	kit.Published(t, ns, "dev", "RULE ONE", "INLINE RULE")

	testenv.Update(t, kit, rules, func(c *corev1.ConfigMap) { c.Data["AGENTS.md"] = "RULE TWO" })
	kit.Eventually(t, func() error {
		p := kit.ConfigMap(t, ns, "dev-context").Data[contract.KeySystemPrompt]
		if !strings.Contains(p, "RULE TWO") {
			return errString("instructions change not published yet")
		}
		return nil
	})
	testenv.Update(t, kit, rules, func(c *corev1.ConfigMap) { c.Data = map[string]string{"other": "x"} })
	kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionCatalogResolved, metav1.ConditionFalse, vocab.ReasonInstructionsNotFound))
}

type errString string

func (e errString) Error() string { return string(e) }

// TestWorkspace_PublishedConfigMapIsRestoredAndReverted: deleted by hand it
// comes back; edited by hand, even by an edit that only removes, it is
// reverted.
func TestWorkspace_PublishedConfigMapIsRestoredAndReverted(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.Published(t, ns, "dev")

	// The status is the record of what was published; a reverted or restored
	// ConfigMap matches it again (kit.Published hashes the data).
	testenv.Update(t, kit, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}}, func(c *corev1.ConfigMap) {
		c.Data[contract.KeySystemPrompt] = "HAND EDIT"
	})
	kit.Published(t, ns, "dev")
	// An edit that only removes (a data key, our label) is reverted too.
	removal := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/skills.json"},{"op":"remove","path":"/metadata/labels"}]`))
	if err := k8sClient.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}}, removal); err != nil {
		t.Fatal(err)
	}
	kit.Published(t, ns, "dev")
	kit.Eventually(t, func() error {
		if cm := kit.ConfigMap(t, ns, "dev-context"); cm.Labels[vocab.WorkspaceLabel] != "dev" {
			return fmt.Errorf("label %s not restored: %v", vocab.WorkspaceLabel, cm.Labels)
		}
		return nil
	})
	if err := k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}}); err != nil {
		t.Fatal(err)
	}
	kit.Published(t, ns, "dev")
}
