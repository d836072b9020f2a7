package hardening

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// wsCase is an input the API server accepts but the Workspace cannot publish:
// the condition must say why, and the last good context must survive.
type wsCase struct {
	name string
	// bad applies the input to a namespace holding the good baseline (see
	// baseline); victim is another tenant's namespace holding a marker.
	bad    func(t *testing.T, ns, victim string)
	cond   string
	reason string
	// msg are substrings of the condition message; "{ns}" and "{victim}"
	// are replaced by the namespaces.
	msg []string
}

// victimMarker is content of another tenant: it must never reach a context.
const victimMarker = "VICTIM-PRIVATE-CONTENT"

func updateWorkspace(t *testing.T, ns string, change func(*v1alpha1.Workspace)) {
	t.Helper()
	testenv.Update(t, kit, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}}, change)
}

func activate(files ...string) func(*testing.T, string, string) {
	return func(t *testing.T, ns, _ string) {
		t.Helper()
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) {
			w.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "notes", Files: files}}
		})
	}
}

func addExtension(change func(*v1alpha1.Extension)) func(*testing.T, string, string) {
	return func(t *testing.T, ns, _ string) {
		t.Helper()
		e := testenv.Extension(ns, "bad-ext", []v1alpha1.ExtensionTool{tool("bad_tool")}, testenv.CELHook("gate", vocab.BeforeToolCall, "true"))
		change(e)
		kit.Create(t, e)
	}
}

func setInstructions(ref v1alpha1.ConfigMapKeyReference) func(*testing.T, string, string) {
	return func(t *testing.T, ns, victim string) {
		t.Helper()
		ref := ref // each run fills in its own victim
		if ref.Namespace == "{victim}" {
			ref.Namespace = victim
		}
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) {
			w.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &ref}}
		})
	}
}

func addSkillFile(path string) func(*testing.T, string, string) {
	return func(t *testing.T, ns, _ string) {
		t.Helper()
		kit.Create(t, testenv.Skill(ns, "messy", "Messy.", "MESSY", v1alpha1.SkillFile{Path: path, Content: "x"}))
	}
}

var wsCases = []wsCase{
	// rule R-CAT-2: duplicates inside one root.
	{name: "duplicate skill name in one root", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		s := testenv.Skill(ns, "notes-copy", "Other notes.", "OTHER")
		s.Spec.Name = "notes"
		kit.Create(t, s)
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonDuplicateName), msg: []string{"skill:notes twice", "{ns}/notes", "{ns}/notes-copy"}},
	{name: "duplicate template name in one root", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		tp := testenv.Template(ns, "review-copy", "Other {{file}}")
		tp.Spec.Name = "review"
		kit.Create(t, tp)
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonDuplicateName), msg: []string{"template:review twice", "{ns}/review-copy"}},
	// rule R-TPL-5: a command's tool step must name a tool of the registry.
	{name: "command step naming a tool outside the registry", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		tp := testenv.Template(ns, "ship", "Ship {{branch}}.")
		tp.Spec.Steps = []v1alpha1.TemplateStep{{Render: true}, {Tool: "deploy", Arguments: &runtime.RawExtension{Raw: []byte(`{"branch":"{{branch}}"}`)}}}
		kit.Create(t, tp)
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInvalidResource), msg: []string{"template", "{ns}/ship", `steps[1].tool: tool "deploy" is not in the Workspace's registry`}},
	{name: "duplicate extension id in one namespace", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Name = "guard" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/guard"}},
	// Skill files the API cannot judge: not in clean form.
	{name: "skill file path ./x", bad: addSkillFile("./x.md"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInvalidResource),
		msg: []string{"{ns}/messy", "files[0].path", `clean form "x.md"`}},
	{name: "skill file path a//b", bad: addSkillFile("docs//b.md"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInvalidResource),
		msg: []string{"files[0].path", `clean form "docs/b.md"`}},
	{name: "skill file path dir/.", bad: addSkillFile("docs/."), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInvalidResource),
		msg: []string{"files[0].path", `clean form "docs"`}},
	// CEL that does not compile (rule R-EXT-2: nothing of it registers).
	{name: "cel syntax error", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "call.(" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "Syntax error"}},
	{name: "cel not a bool", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "1 + 1" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "bool"}},
	{name: "cel before hook reads result", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "!result.isError" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "result"}},
	{name: "cel unknown function", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "call.name.frobnicate()" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "frobnicate"}},
	// Tools.
	{name: "extension tool takes a built-in name", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Tools[0].Name = "bash" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "bash"}},
	{name: "extension tool takes another extension's name", bad: addExtension(func(e *v1alpha1.Extension) { e.Spec.Tools[0].Name = "guard_note" }),
		cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{`tool "guard_note" is already registered`}},
	{name: "tool input schema of type string", bad: addExtension(func(e *v1alpha1.Extension) {
		e.Spec.Tools[0].InputSchema = &runtime.RawExtension{Raw: []byte(`{"type":"string"}`)}
	}), cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "inputSchema"}},
	{name: "service-backed extension whose Service does not answer", bad: addExtension(func(e *v1alpha1.Extension) {
		e.Spec.Source = &v1alpha1.ExtensionSource{Service: v1alpha1.ServiceReference{Name: "nowhere", Port: 80, Path: "/manifest"}}
	}), cond: string(vocab.ConditionExtensionsLoaded), reason: string(vocab.ReasonExtensionRejected), msg: []string{"{ns}/bad-ext", "nowhere.{ns}.svc"}},
	// Budget.
	{name: "context over budget", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) { w.Spec.Budget = &v1alpha1.WorkspaceBudget{MaxContextBytes: 1024} })
	}, cond: string(vocab.ConditionContextPublished), reason: string(vocab.ReasonContextTooLarge), msg: []string{"over the budget of 1024 bytes"}},
	{name: "skill grows the context over budget", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		// The activated skill's body and file enter both system-prompt.md and
		// skills.json: one edit takes the context to about 1 MiB.
		testenv.Update(t, kit, testenv.Skill(ns, "notes", "", ""), func(s *v1alpha1.Skill) {
			s.Spec.Body = strings.Repeat("h", 250<<10)
			s.Spec.Files[0].Content = strings.Repeat("f", 250<<10)
		})
	}, cond: string(vocab.ConditionContextPublished), reason: string(vocab.ReasonContextTooLarge), msg: []string{"over the budget of 524288 bytes"}},
	// Activation (rule R-ACT-1, R-ACT-4).
	{name: "activate an unknown skill", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) { w.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "no-such-skill"}} })
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed), msg: []string{`"no-such-skill"`, "no such skill in the catalog"}},
	{name: "activate an unknown file", bad: activate("missing.md"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{`"missing.md"`, "the skill has no such file"}},
	{name: "activate a file through ../", bad: activate("../rules/AGENTS.md"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{"path leaves the skill root"}},
	{name: "activate an absolute file", bad: activate("/etc/passwd"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{"absolute paths are refused"}},
	{name: "activate a percent-encoded ../ (never decoded)", bad: activate("%2e%2e/checklist.md"), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{`"%2e%2e/checklist.md"`, "the skill has no such file"}},
	{name: "activate a backslash path", bad: activate(`..\checklist.md`), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{"no backslash"}},
	{name: "activate the skill directory itself", bad: activate("checklist.md/.."), cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonActivationFailed),
		msg: []string{"does not name a file inside the skill"}},
	// Instructions.
	{name: "instructions ConfigMap missing", bad: setInstructions(v1alpha1.ConfigMapKeyReference{Name: "gone", Key: "AGENTS.md"}),
		cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInstructionsNotFound), msg: []string{"ConfigMap {ns}/gone", `"AGENTS.md"`}},
	{name: "instructions key missing", bad: setInstructions(v1alpha1.ConfigMapKeyReference{Name: "rules", Key: "MISSING.md"}),
		cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInstructionsNotFound), msg: []string{"ConfigMap {ns}/rules", `"MISSING.md"`}},
	{name: "instructions ConfigMap deleted", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		if err := k8sClient.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rules"}}); err != nil {
			t.Fatal(err)
		}
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInstructionsNotFound), msg: []string{"ConfigMap {ns}/rules"}},
	// Tenancy: another tenant's namespace, through instructions or roots.
	{name: "instructions from another tenant", bad: setInstructions(v1alpha1.ConfigMapKeyReference{Namespace: "{victim}", Name: "rules", Key: "AGENTS.md"}),
		cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonRootNotPermitted), msg: []string{"spec.instructions[0].configMapKeyRef.namespace", `"{victim}"`}},
	{name: "root aimed at another tenant", bad: func(t *testing.T, ns, victim string) {
		t.Helper()
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) {
			w.Spec.Roots = append([]v1alpha1.WorkspaceRoot{{Name: "steal", Namespace: victim}}, w.Spec.Roots...)
		})
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonRootNotPermitted), msg: []string{"spec.roots[0].namespace", `"{victim}"`}},
	{name: "root selector with an unknown operator", bad: func(t *testing.T, ns, _ string) {
		t.Helper()
		updateWorkspace(t, ns, func(w *v1alpha1.Workspace) {
			w.Spec.Roots[0].Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Resembles", Values: []string{"a"}}}}
		})
	}, cond: string(vocab.ConditionCatalogResolved), reason: string(vocab.ReasonInvalidResource), msg: []string{"selector", "Resembles"}},
	// spec.output.configMapName is immutable (the API refuses a change), so
	// an output that names a ConfigMap the Workspace does not own is a
	// creation-time case: TestTenancy_ConfigMapNameConflicts.
}

// baseline creates the good inputs every wsCase starts from and returns the
// published Workspace and ConfigMap: a skill with a file (activated), a
// template, instructions from a ConfigMap, a trusted extension and a
// built-in tool.
func baseline(t *testing.T, ns string) (*v1alpha1.Workspace, *corev1.ConfigMap) {
	t.Helper()
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES BODY", v1alpha1.SkillFile{Path: "checklist.md", Content: "CHECKLIST"}))
	kit.Create(t, testenv.Template(ns, "review", "Review {{file}}."))
	kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rules"}, Data: map[string]string{"AGENTS.md": "PROJECT RULES"}})
	kit.Create(t, testenv.Extension(ns, "guard", []v1alpha1.ExtensionTool{tool("guard_note")}, testenv.CELHook("gate", vocab.BeforeToolCall, "true")))
	ws := devWorkspace(ns)
	ws.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "notes", Files: []string{"checklist.md"}}}
	ws.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "rules", Key: "AGENTS.md"}}}
	ws.Spec.Tools = &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"bash"}}
	kit.Create(t, ws)
	return kit.Published(t, ns, "dev", "PROJECT RULES", "NOTES BODY", "CHECKLIST", "guard_note")
}

// TestBadInput_WorkspaceConditionsKeepLastGoodContext publishes a good
// context, applies each bad input of wsCases, and proves that the Workspace
// says why (the condition, and Ready, carry the reason and a message naming
// the input) while the published ConfigMap and status.context stay exactly
// the last good ones. No other tenant's content reaches any ConfigMap.
func TestBadInput_WorkspaceConditionsKeepLastGoodContext(t *testing.T) {
	t.Parallel()
	for _, tc := range wsCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			victim := kit.NewNamespace(t, vocab.TrustTrusted)
			marker := victimMarker + " " + victim
			kit.Create(t, testenv.Skill(victim, "notes", "Victim notes.", marker))
			kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "rules"}, Data: map[string]string{"AGENTS.md": marker}})
			ns := kit.NewNamespace(t, vocab.TrustTrusted)
			good, goodCM := baseline(t, ns)
			testenv.MustContain(t, "good context", goodCM.Data["system-prompt.md"], "PROJECT RULES", "NOTES BODY", "CHECKLIST", "guard_note")

			tc.bad(t, ns, victim)

			got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionType(tc.cond), metav1.ConditionFalse, vocab.ConditionReason(tc.reason)))
			if err := testenv.Condition(vocab.ConditionReady, metav1.ConditionFalse, vocab.ConditionReason(tc.reason))(got); err != nil {
				t.Error(err)
			}
			msg := testenv.ConditionMessage(got, vocab.ConditionType(tc.cond))
			for _, m := range tc.msg {
				testenv.MustContain(t, tc.cond+" message", msg, strings.NewReplacer("{ns}", ns, "{victim}", victim).Replace(m))
			}
			testenv.MustContain(t, "ContextPublished message", testenv.ConditionMessage(got, vocab.ConditionContextPublished),
				"the last good context "+good.Status.Context.Hash+" stays published")
			if got.Status.Context == nil || *got.Status.Context != *good.Status.Context {
				t.Errorf("status.context = %+v, want the last good %+v", got.Status.Context, good.Status.Context)
			}
			cm := kit.ConfigMap(t, ns, "dev-context")
			if cm.ResourceVersion != goodCM.ResourceVersion || cm.Annotations[vocab.ContextHashAnnotation] != good.Status.Context.Hash {
				t.Errorf("published ConfigMap changed: resourceVersion %s → %s, hash %s", goodCM.ResourceVersion, cm.ResourceVersion, cm.Annotations[vocab.ContextHashAnnotation])
			}
			var list corev1.ConfigMapList
			if err := k8sClient.List(context.Background(), &list); err != nil {
				t.Fatal(err)
			}
			for i := range list.Items {
				if c := &list.Items[i]; c.Namespace != victim && strings.Contains(allData(c), marker) {
					t.Errorf("ConfigMap %s/%s carries the other tenant's content", c.Namespace, c.Name)
				}
			}
		})
	}
}
