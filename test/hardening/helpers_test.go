package hardening

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/testenv"
)

// published waits for the Workspace to be Ready and for its ConfigMap to
// carry the status hash, and returns both.
func published(t *testing.T, ns, name string) (*v1alpha1.Workspace, *corev1.ConfigMap) {
	t.Helper()
	var ws *v1alpha1.Workspace
	var cm *corev1.ConfigMap
	kit.Eventually(t, func() error {
		ws = kit.WaitFor(t, ns, name, testenv.Ready)
		var err error
		if cm, err = kit.GetConfigMap(ns, ws.ConfigMapName()); err != nil {
			return err
		}
		return consistent(ws, cm)
	})
	return ws, cm
}

// consistent checks that the ConfigMap holds exactly what the status says
// was published: annotation, data hash and status hash agree.
func consistent(ws *v1alpha1.Workspace, cm *corev1.ConfigMap) error {
	if ws.Status.Context == nil {
		return fmt.Errorf("no status.context")
	}
	h := ws.Status.Context.Hash
	if a := cm.Annotations[v1alpha1.ContextHashAnnotation]; a != h {
		return fmt.Errorf("ConfigMap annotation %q, status hash %q", a, h)
	}
	if d := resources.ContextHash(cm.Data); d != h {
		return fmt.Errorf("ConfigMap data hashes to %q, status hash %q", d, h)
	}
	return nil
}

func skill(ns, name, description, body string, files ...v1alpha1.SkillFile) *v1alpha1.Skill {
	return &v1alpha1.Skill{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.SkillSpec{Description: v1alpha1.Description(description), Body: body, Files: files},
	}
}

func template(ns, name, body string) *v1alpha1.Template {
	return &v1alpha1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.TemplateSpec{Body: body}}
}

// devWorkspace reads its own namespace, then the platform namespace.
func devWorkspace(ns string) *v1alpha1.Workspace {
	return &v1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{
			{Name: "project"}, {Name: "platform", Namespace: platformNS},
		}},
	}
}

func celHook(name string, event v1alpha1.HookEvent, expr string) v1alpha1.ExtensionHook {
	return v1alpha1.ExtensionHook{Name: name, Event: event, TimeoutSeconds: 5, CEL: &v1alpha1.CELHook{Expression: expr, Message: "denied by " + name}}
}

func extension(ns, name string, tools []v1alpha1.ExtensionTool, hooks ...v1alpha1.ExtensionHook) *v1alpha1.Extension {
	return &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ExtensionSpec{Tools: tools, Hooks: hooks}}
}

func tool(name string) v1alpha1.ExtensionTool {
	return v1alpha1.ExtensionTool{Name: v1alpha1.ToolName(name), Description: "Tool " + v1alpha1.Description(name) + "."}
}

// allData joins a ConfigMap's data for leak checks.
func allData(cm *corev1.ConfigMap) string {
	var b strings.Builder
	for k, v := range cm.Data {
		b.WriteString(k + "\n" + v + "\n")
	}
	return b.String()
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
