package hardening

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// apiCase is an input the API server must reject, and the words its message
// must carry.
type apiCase struct {
	name  string
	input func(ns string) client.Object
	// update, when set, is applied to the published Workspace instead of
	// creating input.
	update func(*v1alpha1.Workspace)
	want   []string
}

func skillWith(change func(*v1alpha1.Skill)) func(string) client.Object {
	return func(ns string) client.Object {
		s := testenv.Skill(ns, "bad", "A bad skill.", "BODY")
		change(s)
		return s
	}
}

func extensionWith(change func(*v1alpha1.Extension)) func(string) client.Object {
	return func(ns string) client.Object {
		e := testenv.Extension(ns, "bad-ext", []v1alpha1.ExtensionTool{tool("bad_tool")}, testenv.CELHook("gate", vocab.BeforeToolCall, "true"))
		change(e)
		return e
	}
}

func webhookHook(svc v1alpha1.ServiceReference) v1alpha1.ExtensionHook {
	return v1alpha1.ExtensionHook{Name: "remote", Event: vocab.BeforeToolCall, TimeoutSeconds: 5,
		Webhook: &v1alpha1.WebhookHook{Service: svc}}
}

// apiCases are inputs admission refuses: invalid names and sizes, paths that
// escape, hooks that are not exactly one kind, webhooks aimed anywhere but a
// Service name of the extension's own namespace, and Workspaces that break
// their own rules.
var apiCases = []apiCase{
	// Names (rule R-SK-1).
	{name: "skill metadata.name not a logical name and no spec.name", input: func(ns string) client.Object { return testenv.Skill(ns, "review.v2", "D.", "B") },
		want: []string{"spec.name is unset, so metadata.name must be a valid skill name"}},
	{name: "skill spec.name uppercase", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Name = "Review" }),
		want: []string{"spec.name", "should match"}},
	{name: "skill spec.name double hyphen", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Name = "code--review" }),
		want: []string{"spec.name", "must not contain consecutive hyphens"}},
	{name: "skill spec.name trailing hyphen", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Name = "review-" }),
		want: []string{"spec.name", "should match"}},
	{name: "skill spec.name 65 characters", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Name = v1alpha1.LogicalName(strings.Repeat("a", 65)) }),
		want: []string{"spec.name", "Too long"}},
	{name: "template metadata.name not a logical name", input: func(ns string) client.Object { return testenv.Template(ns, "review.v2", "B") },
		want: []string{"metadata.name must be a valid"}},
	{name: "extension metadata.name not a logical name", input: extensionWith(func(e *v1alpha1.Extension) { e.Name = "guard.v2" }),
		want: []string{"metadata.name must be a valid extension name"}},
	{name: "tool name with a space", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Tools[0].Name = "rm rf" }),
		want: []string{"spec.tools[0].name", "should match"}},
	// Sizes.
	{name: "skill description blank", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Description = "   " }),
		want: []string{"spec.description", "must not be blank"}},
	{name: "skill description 1025 characters", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Description = v1alpha1.Description(strings.Repeat("d", 1025)) }),
		want: []string{"spec.description", "Too long"}},
	{name: "skill body empty", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Body = "" }),
		want: []string{"spec.body"}},
	{name: "skill body over 256 KiB", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Body = strings.Repeat("b", 262145) }),
		want: []string{"spec.body", "Too long"}},
	{name: "skill compatibility over 500", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Compatibility = strings.Repeat("c", 501) }),
		want: []string{"spec.compatibility", "Too long"}},
	{name: "template body over 64 KiB", input: func(ns string) client.Object { return testenv.Template(ns, "big", strings.Repeat("t", 65537)) },
		want: []string{"spec.body", "Too long"}},
	{name: "cel expression over 4096", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = strings.Repeat("t", 4097) }),
		want: []string{"spec.hooks[0].cel.expression", "Too long"}},
	{name: "hook timeout over 30 s", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].TimeoutSeconds = 31 }),
		want: []string{"spec.hooks[0].timeoutSeconds", "less than or equal to 30"}},
	// Skill file paths.
	{name: "skill file path with ../", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Files = []v1alpha1.SkillFile{{Path: "../../etc/passwd", Content: "x"}} }),
		want: []string{"spec.files[0].path", "must not contain a '..' segment"}},
	{name: "skill file path with inner ..", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Files = []v1alpha1.SkillFile{{Path: "docs/../../x.md", Content: "x"}} }),
		want: []string{"spec.files[0].path", "must not contain a '..' segment"}},
	{name: "skill file path absolute", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Files = []v1alpha1.SkillFile{{Path: "/etc/passwd", Content: "x"}} }),
		want: []string{"spec.files[0].path", "path must be relative"}},
	{name: "skill file path with backslash", input: skillWith(func(s *v1alpha1.Skill) { s.Spec.Files = []v1alpha1.SkillFile{{Path: `..\secret`, Content: "x"}} }),
		want: []string{"spec.files[0].path", "no backslash"}},
	{name: "skill file paths duplicated", input: skillWith(func(s *v1alpha1.Skill) {
		s.Spec.Files = []v1alpha1.SkillFile{{Path: "a.md", Content: "1"}, {Path: "a.md", Content: "2"}}
	}), want: []string{"file paths must be unique"}},
	// Hooks and webhooks.
	{name: "hook with both cel and webhook", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks[0].Webhook = &v1alpha1.WebhookHook{Service: v1alpha1.ServiceReference{Name: "guard"}}
	}), want: []string{"exactly one of cel or webhook must be set"}},
	{name: "hook with neither cel nor webhook", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL = nil }),
		want: []string{"exactly one of cel or webhook must be set"}},
	{name: "hook event unknown", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].Event = "Whenever" }),
		want: []string{"spec.hooks[0].event", "Unsupported value"}},
	{name: "cel expression empty", input: extensionWith(func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "" }),
		want: []string{"spec.hooks[0].cel.expression"}},
	{name: "webhook service in another namespace (dotted name)", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "guard.other-tenant"})}
	}), want: []string{"spec.hooks[0].webhook.service.name", "should match"}},
	{name: "webhook service as a URL", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "http://169.254.169.254/latest"})}
	}), want: []string{"spec.hooks[0].webhook.service.name", "should match"}},
	{name: "webhook service as a cluster DNS name", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "kubernetes.default.svc"})}
	}), want: []string{"spec.hooks[0].webhook.service.name", "should match"}},
	{name: "webhook path with ..", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "guard", Path: "/hooks/../../admin"})}
	}), want: []string{"spec.hooks[0].webhook.service.path", "must not contain a '..' segment"}},
	{name: "webhook path not starting with /", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "guard", Path: "@evil.example.com/x"})}
	}), want: []string{"spec.hooks[0].webhook.service.path", "must start with '/'"}},
	{name: "webhook port out of range", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "guard", Port: 70000})}
	}), want: []string{"spec.hooks[0].webhook.service.port"}},
	{name: "manifest source service in another namespace", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Source = &v1alpha1.ExtensionSource{Service: v1alpha1.ServiceReference{Name: "manifests.other-tenant.svc.cluster.local"}}
	}), want: []string{"spec.source.service.name", "should match"}},
	{name: "duplicate tool names in one extension", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Tools = append(e.Spec.Tools, tool("bad_tool"))
	}), want: []string{"tool names must be unique within an extension"}},
	{name: "tool input schema not an object", input: extensionWith(func(e *v1alpha1.Extension) {
		e.Spec.Tools[0].InputSchema = &runtime.RawExtension{Raw: []byte(`"string"`)}
	}), want: []string{"spec.tools[0].inputSchema"}},
	// Workspaces.
	{name: "workspace root names duplicated", update: func(w *v1alpha1.Workspace) {
		w.Spec.Roots = append(w.Spec.Roots, v1alpha1.WorkspaceRoot{Name: "project"})
	}, want: []string{"root names must be unique"}},
	{name: "workspace root namespace not a DNS label", update: func(w *v1alpha1.Workspace) {
		w.Spec.Roots = append(w.Spec.Roots, v1alpha1.WorkspaceRoot{Name: "other", Namespace: "../kube-system"})
	}, want: []string{"spec.roots[2].namespace", "should match"}},
	{name: "workspace with 17 roots", update: func(w *v1alpha1.Workspace) {
		for i := range 15 {
			w.Spec.Roots = append(w.Spec.Roots, v1alpha1.WorkspaceRoot{Name: "r" + strings.Repeat("x", i)})
		}
	}, want: []string{"spec.roots", "Too many"}},
	{name: "workspace activates a skill twice", update: func(w *v1alpha1.Workspace) {
		w.Spec.Activate = []v1alpha1.SkillActivation{{Skill: "notes"}, {Skill: "notes"}}
	}, want: []string{"a skill may be activated only once"}},
	{name: "instructions both inline and ConfigMap", update: func(w *v1alpha1.Workspace) {
		w.Spec.Instructions = []v1alpha1.InstructionSource{{Inline: "x", ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "rules"}}}
	}, want: []string{"exactly one of inline or configMapKeyRef must be set"}},
	{name: "instructions ConfigMap key with a path", update: func(w *v1alpha1.Workspace) {
		w.Spec.Instructions = []v1alpha1.InstructionSource{{ConfigMapKeyRef: &v1alpha1.ConfigMapKeyReference{Name: "rules", Key: "../secret"}}}
	}, want: []string{"spec.instructions[0].configMapKeyRef.key", "should match"}},
	{name: "budget over the hard cap", update: func(w *v1alpha1.Workspace) {
		w.Spec.Budget = &v1alpha1.WorkspaceBudget{MaxContextBytes: 2 << 20}
	}, want: []string{"spec.budget.maxContextBytes", "less than or equal to 921600"}},
	{name: "budget under the minimum", update: func(w *v1alpha1.Workspace) {
		w.Spec.Budget = &v1alpha1.WorkspaceBudget{MaxContextBytes: 100}
	}, want: []string{"spec.budget.maxContextBytes", "greater than or equal to 1024"}},
	{name: "output ConfigMap name invalid", update: func(w *v1alpha1.Workspace) {
		w.Spec.Output = &v1alpha1.WorkspaceOutput{ConfigMapName: "Context_Map"}
	}, want: []string{"spec.output.configMapName", "should match"}},
	{name: "denied tool name invalid", update: func(w *v1alpha1.Workspace) {
		w.Spec.Tools = &v1alpha1.WorkspaceTools{Deny: []v1alpha1.ToolName{"rm -rf"}}
	}, want: []string{"spec.tools.deny[0]", "should match"}},
}

// TestBadInput_RejectedByAPIKeepsLastGoodContext applies every input of
// apiCases next to a published Workspace: each is refused with a message
// naming the field and rule, and the published context is not written to.
func TestBadInput_RejectedByAPIKeepsLastGoodContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, good, goodCM := publishedNotes(t, vocab.TrustTrusted)

	for _, tc := range apiCases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.update != nil {
				ws := &v1alpha1.Workspace{}
				if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(good), ws); err != nil {
					t.Fatal(err)
				}
				tc.update(ws)
				err = k8sClient.Update(ctx, ws)
			} else {
				err = k8sClient.Create(ctx, tc.input(ns))
			}
			if err == nil {
				t.Fatalf("accepted; want a rejection containing %q", tc.want)
			}
			testenv.MustContain(t, "API error", err.Error(), tc.want...)
			cm := kit.ConfigMap(t, ns, "dev-context")
			if cm.ResourceVersion != goodCM.ResourceVersion {
				t.Errorf("published ConfigMap was written (resourceVersion %s → %s)", goodCM.ResourceVersion, cm.ResourceVersion)
			}
		})
	}
	after := kit.WaitFor(t, ns, "dev", testenv.Ready)
	if after.Generation != good.Generation || after.Status.Context.Hash != good.Status.Context.Hash {
		t.Errorf("Workspace changed: generation %d → %d, hash %s → %s", good.Generation, after.Generation, good.Status.Context.Hash, after.Status.Context.Hash)
	}
}
