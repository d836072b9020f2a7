package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// publishedVerdict reads ns's published context, rebuilds its hooks as
// hostd does, and asks them about one call; it also returns the params the
// context carries for the hook "length".
func publishedVerdict(t *testing.T, ns string) (blocked bool, params *contract.HookParams, err error) {
	t.Helper()
	_, cm := kit.Published(t, ns, "dev")
	var reg contract.Registry
	if err := json.Unmarshal([]byte(cm.Data[contract.KeyManifest]), &reg); err != nil {
		return false, nil, err
	}
	for _, h := range reg.Hooks {
		if h.Name == "length" {
			params = h.Params
		}
	}
	host, _ := exthost.NewHostFromRegistry(context.Background(), reg, exthost.WorkspaceInfo{Name: "dev", Namespace: ns}, nil)
	d := host.Decide(context.Background(), exthost.ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"command": "make test"}})
	return d.Blocked != nil, params, nil
}

// A platform extension imposed on two namespaces reads each namespace's own
// params ConfigMap: one expression, two verdicts; editing one namespace's
// ConfigMap republishes that namespace's context with the new value.
func TestWorkspace_ParameterisedGuardTwoNamespacesTwoVerdicts(t *testing.T) { // R-LC-7
	ctx := context.Background()
	a, b := kit.NewNamespace(t, vocab.TrustTrusted), kit.NewNamespace(t, vocab.TrustTrusted)
	guard := testenv.LengthGuard(platformOtherNS, "length-"+a)
	guard.Spec.Hooks[0].TimeoutSeconds = 1
	guard.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{a, b}}}}
	kit.Create(t, guard)
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, guard) })
	for ns, limit := range map[string]string{a: "4", b: "100"} {
		kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "length-guard"}, Data: map[string]string{"maxCommand": limit}})
		kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}})
	}
	want := func(ns string, blocked bool, limit string) {
		t.Helper()
		kit.Eventually(t, func() error {
			got, params, err := publishedVerdict(t, ns)
			switch {
			case err != nil:
				return err
			case params == nil || params.Values["maxCommand"] != limit || params.From != ns+"/length-guard":
				return fmt.Errorf("%s publishes params %+v, want maxCommand %s", ns, params, limit)
			case got != blocked:
				return fmt.Errorf("%s: blocked %v, want %v", ns, got, blocked)
			}
			return nil
		})
	}
	want(a, true, "4")
	want(b, false, "100")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b, Name: "length-guard"}}
	testenv.Update(t, kit, cm, func(c *corev1.ConfigMap) { c.Data["maxCommand"] = "4" })
	want(b, true, "4")
	want(a, true, "4")
}
