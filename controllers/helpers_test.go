package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

const waitTimeout = 30 * time.Second

// newNamespace creates a namespace for one test, with the given trust level
// ("" leaves the label off).
func newNamespace(t *testing.T, trust v1alpha1.TrustLevel) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ws-"}}
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

// eventually retries f until it returns nil or the wait times out.
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

// waitFor waits until the Workspace's status satisfies check.
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

// condition returns a check that the condition has the status and reason.
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

func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatalf("getting ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

func skill(ns, name, description, body string, files ...v1alpha1.SkillFile) *v1alpha1.Skill {
	return &v1alpha1.Skill{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.SkillSpec{Description: v1alpha1.Description(description), Body: body, Files: files},
	}
}

// workspaceWithRoots is a Workspace reading its own namespace and then the
// given platform namespace.
func workspaceWithRoots(ns, name, platform string) *v1alpha1.Workspace {
	return &v1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{
			{Name: "project"}, {Name: "platform", Namespace: platform},
		}},
	}
}

// reviewExtension is SPEC §9's extension: tool review_note, a before hook
// denying SECRET and an after hook that observes.
func reviewExtension(ns string) *v1alpha1.Extension {
	return &v1alpha1.Extension{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "review-extension"},
		Spec: v1alpha1.ExtensionSpec{
			PromptGuide: "Use review_note to record findings.",
			Tools: []v1alpha1.ExtensionTool{{
				Name: "review_note", Description: "Adds a review note.",
				InputSchema: &runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
			}},
			Hooks: []v1alpha1.ExtensionHook{
				{Name: "deny-secret", Event: v1alpha1.BeforeToolCall, TimeoutSeconds: 10,
					Match: &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"review_note"}},
					CEL:   &v1alpha1.CELHook{Expression: "!string(call.arguments.text).contains('SECRET')", Message: "notes must not contain secrets"}},
				{Name: "observe", Event: v1alpha1.AfterToolResult, TimeoutSeconds: 10, CEL: &v1alpha1.CELHook{Expression: "true"}},
			},
			MessageTypes: []v1alpha1.MessageType{{Type: "review/note", InContext: true}},
		},
	}
}

func extensionStatesOf(ws *v1alpha1.Workspace) map[string]v1alpha1.ExtensionLoadState {
	out := map[string]v1alpha1.ExtensionLoadState{}
	for _, e := range ws.Status.Extensions {
		out[e.Namespace+"/"+e.Name] = e.State
	}
	return out
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
			t.Errorf("%s contains %q:\n%s", what, w, s)
		}
	}
}

type namespaceT = corev1.Namespace

func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
