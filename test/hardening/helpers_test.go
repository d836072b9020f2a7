package hardening

import (
	"bufio"
	"bytes"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

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
