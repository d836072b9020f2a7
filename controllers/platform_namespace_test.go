package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// setPlatformTrust sets (or, with "", removes) platform-other's trust label.
func setPlatformTrust(t *testing.T, level string) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: platformOtherNS}, ns); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if level == "" {
		delete(ns.Labels, vocab.TrustLabel)
	} else {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[vocab.TrustLabel] = level
	}
	if err := k8sClient.Patch(context.Background(), ns, patch); err != nil {
		t.Fatal(err)
	}
}

// A platform namespace that loses its trust label is never silent: every
// Workspace says so in its PlatformPolicy condition, naming the namespace,
// the manager records a Warning Event on the Namespace and its metric reads
// 0; labelled again, all three recover. (The Workspace stays Ready: its
// context is published, without that namespace's policy.)
func TestPlatformNamespace_UnlabelledIsAConditionAnEventAndAMetric(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, workspaceWithRoots(ns, "dev", platformOtherNS))
	kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionPlatformPolicy, metav1.ConditionTrue, vocab.ReasonPlatformNamespacesTrusted))
	kit.Eventually(t, func() error {
		if v := testenv.ControllerMetric("loadout_platform_namespace_trusted", "namespace", platformOtherNS); v != 1 {
			return fmt.Errorf("loadout_platform_namespace_trusted{namespace=%q} = %v, want 1", platformOtherNS, v)
		}
		return nil
	})

	setPlatformTrust(t, "")
	t.Cleanup(func() { setPlatformTrust(t, string(vocab.TrustTrusted)) })
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionPlatformPolicy, metav1.ConditionFalse, vocab.ReasonPlatformNamespaceUnlabelled))
	c := findCondition(got, vocab.ConditionPlatformPolicy)
	if !strings.Contains(c.Message, "platform namespace "+platformOtherNS+" does not exist or carry no valid "+vocab.TrustLabel+" label") {
		t.Errorf("PlatformPolicy message %q does not name the namespace", c.Message)
	}
	if r := findCondition(got, vocab.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v; an unlabelled platform namespace is reported, not a failed publish", r)
	}
	kit.Eventually(t, func() error {
		if v := testenv.ControllerMetric("loadout_platform_namespace_trusted", "namespace", platformOtherNS); v != 0 {
			return fmt.Errorf("loadout_platform_namespace_trusted{namespace=%q} = %v, want 0", platformOtherNS, v)
		}
		return warningEvent("", "Namespace", platformOtherNS, vocab.ReasonPlatformNamespaceUnlabelled, "kubectl label namespace "+platformOtherNS)
	})

	setPlatformTrust(t, string(vocab.TrustTrusted))
	kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionPlatformPolicy, metav1.ConditionTrue, vocab.ReasonPlatformNamespacesTrusted))
	kit.Eventually(t, func() error {
		if v := testenv.ControllerMetric("loadout_platform_namespace_trusted", "namespace", platformOtherNS); v != 1 {
			return fmt.Errorf("loadout_platform_namespace_trusted{namespace=%q} = %v, want 1", platformOtherNS, v)
		}
		return nil
	})
}

// The condition names every unlabelled platform namespace and says nothing
// of it applies; without a plan it is left as it was.
func TestPlatformPolicyCondition_NamesEveryUnlabelledNamespace(t *testing.T) {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "dev", Generation: 1}}
	setPlatformPolicyCondition(ws, &workspace.Plan{UnlabelledPlatform: []string{"loadout-system", "platform-extras"}})
	c := findCondition(ws, vocab.ConditionPlatformPolicy)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(vocab.ReasonPlatformNamespaceUnlabelled) ||
		!strings.Contains(c.Message, "platform namespaces loadout-system, platform-extras do not exist or carry no valid") {
		t.Fatalf("condition %+v", c)
	}
	setPlatformPolicyCondition(ws, nil)
	if c2 := findCondition(ws, vocab.ConditionPlatformPolicy); c2.Status != metav1.ConditionFalse {
		t.Fatalf("a pass without a plan changed the condition: %+v", c2)
	}
	setPlatformPolicyCondition(ws, &workspace.Plan{})
	if c3 := findCondition(ws, vocab.ConditionPlatformPolicy); c3.Status != metav1.ConditionTrue || c3.Reason != string(vocab.ReasonPlatformNamespacesTrusted) {
		t.Fatalf("condition %+v", c3)
	}
}

func findCondition(ws *v1alpha1.Workspace, t vocab.ConditionType) *metav1.Condition {
	for i := range ws.Status.Conditions {
		if ws.Status.Conditions[i].Type == string(t) {
			return &ws.Status.Conditions[i]
		}
	}
	return nil
}
