package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func waitValid(t *testing.T, obj validatedObject, status metav1.ConditionStatus) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	kit.Eventually(t, func() error {
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c = meta.FindStatusCondition(obj.GetConditions(), string(vocab.ConditionValid))
		if c == nil || c.Status != status || c.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("Valid condition %+v, want %s", c, status)
		}
		return nil
	})
	return c
}

func TestTemplate_StatusListsVariablesAndValid(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	tpl := &v1alpha1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "review"},
		Spec: v1alpha1.TemplateSpec{Body: "Review {{file}} for {{owner}}. Focus on {{file}}. Keep {{ literal }}."}}
	kit.Create(t, tpl)
	waitValid(t, tpl, metav1.ConditionTrue)
	if want := []string{"file", "owner"}; !slices.Equal(tpl.Status.Variables, want) {
		t.Errorf("variables %v, want %v", tpl.Status.Variables, want)
	}
}

func TestExtension_CELCompileErrorIsInvalidWithFieldPath(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	ext := testenv.Extension(ns, "broken", nil,
		testenv.CELHook("ok", vocab.BeforeToolCall, "true"),
		testenv.CELHook("bad", vocab.BeforeToolCall, "call.name ==="))
	kit.Create(t, ext)
	c := waitValid(t, ext, metav1.ConditionFalse)
	if c.Reason != string(vocab.ReasonInvalid) || !strings.Contains(c.Message, "spec.hooks[1].cel.expression") {
		t.Errorf("Valid condition %+v, want Invalid naming spec.hooks[1].cel.expression", c)
	}
	testenv.Update(t, kit, ext, func(e *v1alpha1.Extension) { e.Spec.Hooks[1].CEL.Expression = "call.name == 'x'" })
	waitValid(t, ext, metav1.ConditionTrue)
}

// A hook's type error is the Extension's Valid condition at reconcile,
// naming the field, the expression and the type, never a `no such overload`
// on every call: turn.toolCalls is an int, so size() of it is refused.
func TestExtension_CELTypeErrorIsInvalidNamingExpressionAndType(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	ext := testenv.Extension(ns, "typed", nil, testenv.CELHook("busy-turn", vocab.TurnEnd, "size(turn.toolCalls) > 3"))
	kit.Create(t, ext)
	c := waitValid(t, ext, metav1.ConditionFalse)
	for _, want := range []string{"spec.hooks[0].cel.expression", "size(turn.toolCalls) > 3", "applied to '(int)'"} {
		if c.Reason != string(vocab.ReasonInvalid) || !strings.Contains(c.Message, want) {
			t.Fatalf("Valid condition %+v, want Invalid naming %q", c, want)
		}
	}
	testenv.Update(t, kit, ext, func(e *v1alpha1.Extension) { e.Spec.Hooks[0].CEL.Expression = "turn.toolCalls > 3" })
	waitValid(t, ext, metav1.ConditionTrue)
}

// The CRD cannot compile JSON Schema: the Extension's Valid condition reports
// an inputSchema that does not compile, with the field and the schema error.
func TestExtension_InputSchemaThatDoesNotCompileIsInvalidWithTheSchemaError(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	ext := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "schema"},
		Spec: v1alpha1.ExtensionSpec{Tools: []v1alpha1.ExtensionTool{{Name: "review_note", Description: "Record a note.",
			InputSchema: &runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"text":{"type":"strin"}}}`)}}}}}
	kit.Create(t, ext)
	c := waitValid(t, ext, metav1.ConditionFalse)
	if c.Reason != string(vocab.ReasonInvalid) || !strings.Contains(c.Message, "spec.tools[0].inputSchema") ||
		!strings.Contains(c.Message, "at '/properties/text/type'") {
		t.Errorf("Valid condition %+v, want Invalid naming spec.tools[0].inputSchema and the schema error", c)
	}
	testenv.Update(t, kit, ext, func(e *v1alpha1.Extension) {
		e.Spec.Tools[0].InputSchema = &runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)}
	})
	waitValid(t, ext, metav1.ConditionTrue)
}

func TestSkill_ValidConditionIsSet(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	s := testenv.Skill(ns, "review", "Review rules.", "BODY")
	kit.Create(t, s)
	waitValid(t, s, metav1.ConditionTrue)
}

// TestExtension_UntrustedNamespaceIsOnlySyntaxCheckedUntilTrusted: an
// Extension of a namespace that loads no extensions has its CEL parsed, not
// type-checked (type-checking is what a crafted expression
// attacks, and nothing there ever loads), and says so in Valid; raising the
// namespace to trusted re-validates it in full, without any edit to the
// Extension, and the type error appears on its field.
func TestExtension_UntrustedNamespaceIsOnlySyntaxCheckedUntilTrusted(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	ext := testenv.Extension(ns, "typeless", nil, testenv.CELHook("mistyped", vocab.BeforeToolCall, "workspace.name + 1 > 0"))
	kit.Create(t, ext)
	c := waitValid(t, ext, metav1.ConditionTrue)
	if !strings.Contains(c.Message, "parsed, not type-checked: namespace "+ns+" is restricted") {
		t.Fatalf("Valid condition %+v, want it to say the hooks were only parsed and why", c)
	}
	var namespace corev1.Namespace
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: ns}, &namespace); err != nil {
		t.Fatal(err)
	}
	testenv.Update(t, kit, &namespace, func(n *corev1.Namespace) { n.Labels[vocab.TrustLabel] = string(vocab.TrustTrusted) })
	c = waitValid(t, ext, metav1.ConditionFalse)
	if !strings.Contains(c.Message, "spec.hooks[0].cel.expression") || !strings.Contains(c.Message, "no matching overload") {
		t.Fatalf("Valid condition %+v, want the type error on spec.hooks[0].cel.expression", c)
	}
}
