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
