package hardening

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// An imposed hook's params are platform policy: a changed value (here in
// the tenant's own ConfigMap, the source the platform chose) is a new
// policy digest, and the namespace's epoch follows it, so hostd keeps
// serving the new context instead of refusing it as stale.
func TestPolicyEpoch_FollowsAnImposedHooksParams(t *testing.T) { // R-LC-7
	t.Parallel()
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "length-guard"}, Data: map[string]string{"maxCommand": "4"}})
	e := testenv.LengthGuard(platformNS, "length-"+ns)
	e.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	kit.Create(t, e)
	deleteWhenDone(t, e)
	kit.Create(t, devWorkspace(ns))
	// The policy the context carries once the epoch names the same one. Both
	// are read afresh on every try: the context may still move (a first
	// publication before the cache saw the imposed extension), and the epoch
	// follows it.
	current := func() string {
		var digest string
		kit.Published(t, ns, "dev")
		kit.Eventually(t, func() error {
			cm, err := kit.GetConfigMap(ns, "dev-context")
			if err != nil {
				return err
			}
			digest = platformPolicyOf(t, cm)
			ep, err := kit.GetConfigMap(ns, contract.EpochConfigMap)
			if err != nil {
				return err
			}
			if ep.Annotations[controllers.EpochPolicyAnnotation] != digest {
				return fmt.Errorf("epoch names %s, the context carries %s", ep.Annotations[controllers.EpochPolicyAnnotation], digest)
			}
			return nil
		})
		return digest
	}
	first := current()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "length-guard"}}
	testenv.Update(t, kit, cm, func(c *corev1.ConfigMap) { c.Data["maxCommand"] = "100" })
	kit.Eventually(t, func() error {
		if second := current(); second == first {
			return fmt.Errorf("the context still carries the first policy %s", first)
		}
		return nil
	})
}
