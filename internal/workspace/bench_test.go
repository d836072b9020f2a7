package workspace

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/resources"
)

// BenchmarkReconcilePass is the CPU of one Workspace reconcile without the
// API server: Gather from objects, load extensions, Publish. The shape is the
// harness's memory phase: 500 project Skills, 2 platform Skills and a
// platform Extension with a CEL hook, per Workspace.
func BenchmarkReconcilePass(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			objs := &fakeObjects{labels: map[string]map[string]string{}}
			for i := range n {
				s := sk("team", fmt.Sprintf("skill-%04d", i))
				s.Spec.Description = v1alpha1.Description("What skill " + fmt.Sprint(i) + " is for, in one sentence.")
				s.Spec.Body = strings.Repeat("Body line of the skill.\n", 12)
				s.Spec.Files = []v1alpha1.SkillFile{{Path: "ref.md", Content: strings.Repeat("reference\n", 20)}}
				objs.skills = append(objs.skills, s)
			}
			objs.skills = append(objs.skills, sk("loadout-system", "shared"), sk("loadout-system", "review"))
			e := ext("loadout-system", "policy")
			e.Spec.Tools = []v1alpha1.ExtensionTool{{Name: "review_note", Description: "Adds a review note."}}
			e.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "deny-secret", Event: vocab.BeforeToolCall, TimeoutSeconds: 10,
				CEL: &v1alpha1.CELHook{Expression: "!string(call.arguments.text).contains('SECRET')", Message: "no secrets"}}}
			objs.extensions = append(objs.extensions, e)
			ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", Generation: 1},
				Spec: v1alpha1.WorkspaceSpec{Activate: []v1alpha1.SkillActivation{{Skill: "skill-0001", Files: []string{"ref.md"}}}}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				plan, err := gatherIn(ws, objs)
				if err != nil {
					b.Fatal(err)
				}
				plan.Input.Registry, _ = HostLoader{}.LoadExtensions(ctx, plan.Input.Workspace, plan)
				res, err := resources.Render(plan.Input)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Bytes), "context-bytes")
			}
		})
	}
}

// BenchmarkResolveImposed is a Workspace's pass under N imposed platform
// extensions, each with one tool and five CEL hooks (BenchmarkLoadObject's
// shape), and 10 project Skills. "resolve" is Resolve alone, the platform's
// policy computed once (preview, and every Workspace of a namespace);
// "reconcile" also computes the policy, as the controller does for each
// Workspace. "prepared" commits the extensions the policy prepared;
// "reloaded" is the path before it (reloading): the pass imports and builds
// every imposed extension again. docs/benchmarks.md, "Resolution".
func BenchmarkResolveImposed(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		objs := &fakeObjects{labels: map[string]map[string]string{}}
		for i := range 10 {
			objs.skills = append(objs.skills, sk("team", fmt.Sprintf("skill-%02d", i)))
		}
		for i := range n {
			e := ext("loadout-system", fmt.Sprintf("policy-%02d", i))
			e.Spec.Tools = []v1alpha1.ExtensionTool{{Name: v1alpha1.ToolName(fmt.Sprintf("note_%02d", i)), Description: "Adds a note."}}
			for j, expr := range []string{
				"!has(call.arguments.text) || !call.arguments.text.contains('SECRET')",
				"call.name != 'bash' || !call.arguments.command.startsWith('rm ')",
				"workspace.namespace.startsWith('team-')",
				"call.arguments.all(k, size(k) < 64)",
				"!('force' in call.arguments)",
			} {
				e.Spec.Hooks = append(e.Spec.Hooks, v1alpha1.ExtensionHook{Name: fmt.Sprintf("rule-%d", j), Event: vocab.BeforeToolCall,
					TimeoutSeconds: 10, CEL: &v1alpha1.CELHook{Expression: expr, Message: "denied"}})
			}
			objs.extensions = append(objs.extensions, e)
		}
		ws := workspaceIn("team")
		ctx := context.Background()
		pass := func(b *testing.B, platform *Platform) {
			b.Helper()
			res, err := Resolve(ctx, ws, objs, policy, platform, HostLoader{})
			if err != nil || !res.Publishable() || len(res.Extensions) != n {
				b.Fatalf("%v: %+v", err, res)
			}
		}
		policyOf := func(b *testing.B) *Platform {
			b.Helper()
			platform, err := PlatformPolicyOf(ctx, ws.Namespace, objs, policy, HostLoader{})
			if err != nil {
				b.Fatal(err)
			}
			return platform
		}
		for _, v := range []struct {
			path string
			as   func(*Platform) *Platform
		}{{"prepared", func(p *Platform) *Platform { return p }}, {"reloaded", reloading}} {
			path, as := v.path, v.as
			b.Run(fmt.Sprintf("imposed=%d/resolve/%s", n, path), func(b *testing.B) {
				platform := as(policyOf(b))
				b.ReportAllocs()
				for b.Loop() {
					pass(b, platform)
				}
			})
			b.Run(fmt.Sprintf("imposed=%d/reconcile/%s", n, path), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					pass(b, as(policyOf(b)))
				}
			})
		}
	}
}
