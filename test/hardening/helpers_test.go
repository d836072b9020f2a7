package hardening

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
)

// waitTimeout is generous: the suite shares two cores with other work, and
// nothing here asserts timings.
const waitTimeout = 60 * time.Second

// newNamespace creates a namespace for one test ("" leaves the trust label off).
func newNamespace(t *testing.T, trust v1alpha1.TrustLevel) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hard-"}}
	if trust != "" {
		ns.Labels = map[string]string{v1alpha1.TrustLabel: string(trust)}
	}
	create(t, ns)
	return ns.Name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
	}
}

// update re-reads obj, applies change and writes it, retrying on conflicts.
func update[T client.Object](t *testing.T, obj T, change func(T)) {
	t.Helper()
	eventually(t, func() error {
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return k8sClient.Update(context.Background(), obj)
	})
}

// eventually retries f until it returns nil or waitTimeout passes.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", waitTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor waits until the Workspace's status describes its generation and
// satisfies check.
func waitFor(t *testing.T, ns, name string, check func(*v1alpha1.Workspace) error) *v1alpha1.Workspace {
	t.Helper()
	ws := &v1alpha1.Workspace{}
	eventually(t, func() error {
		if err := k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, ws); err != nil {
			return err
		}
		if ws.Status.ObservedGeneration != ws.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", ws.Status.ObservedGeneration, ws.Generation)
		}
		return check(ws)
	})
	return ws
}

func condition(condType string, status metav1.ConditionStatus, reason string) func(*v1alpha1.Workspace) error {
	return func(ws *v1alpha1.Workspace) error {
		c := meta.FindStatusCondition(ws.Status.Conditions, condType)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("condition %s is %+v, want %s/%s", condType, c, status, reason)
		}
		return nil
	}
}

func ready(ws *v1alpha1.Workspace) error {
	return condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReconciled)(ws)
}

func conditionMessage(ws *v1alpha1.Workspace, condType string) string {
	if c := meta.FindStatusCondition(ws.Status.Conditions, condType); c != nil {
		return c.Message
	}
	return ""
}

func getConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm)
}

func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := getConfigMap(ns, name)
	if err != nil {
		t.Fatalf("getting ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

// published waits for the Workspace to be Ready and for its ConfigMap to
// carry the status hash, and returns both.
func published(t *testing.T, ns, name string) (*v1alpha1.Workspace, *corev1.ConfigMap) {
	t.Helper()
	var ws *v1alpha1.Workspace
	var cm *corev1.ConfigMap
	eventually(t, func() error {
		ws = waitFor(t, ns, name, ready)
		var err error
		if cm, err = getConfigMap(ns, ws.ConfigMapName()); err != nil {
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

func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("%s contains %q", what, w)
		}
	}
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
