package testenv

import (
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
)

// Kit holds what the envtest suites share to create objects and wait for the
// controller: a direct (uncached) client, as a user sees the cluster.
type Kit struct {
	Client client.Client
	// Timeout bounds every wait. Generous: suites share two cores with other
	// work, and no test asserts a timing.
	Timeout time.Duration
	// NamespacePrefix starts the generated name of each test's namespace.
	NamespacePrefix string
}

// NewNamespace creates a namespace for one test with the given trust level
// ("" leaves the label off).
func (k *Kit) NewNamespace(t testing.TB, trust v1alpha1.TrustLevel) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: k.NamespacePrefix}}
	if trust != "" {
		ns.Labels = map[string]string{v1alpha1.TrustLabel: string(trust)}
	}
	k.Create(t, ns)
	return ns.Name
}

// Create creates obj or fails the test, naming the object.
func (k *Kit) Create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
	}
}

// Update re-reads obj, applies change and writes it, retrying on conflicts.
func Update[T client.Object](t testing.TB, k *Kit, obj T, change func(T)) {
	t.Helper()
	k.Eventually(t, func() error {
		if err := k.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return k.Client.Update(context.Background(), obj)
	})
}

// Eventually retries f until it returns nil, or fails the test with f's last
// error when Timeout passes.
func (k *Kit) Eventually(t testing.TB, f func() error) {
	t.Helper()
	deadline := time.Now().Add(k.Timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", k.Timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitFor waits until the Workspace's status describes its generation and
// satisfies check, and returns it.
func (k *Kit) WaitFor(t testing.TB, ns, name string, check func(*v1alpha1.Workspace) error) *v1alpha1.Workspace {
	t.Helper()
	ws := &v1alpha1.Workspace{}
	k.Eventually(t, func() error {
		if err := k.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, ws); err != nil {
			return err
		}
		if ws.Status.ObservedGeneration != ws.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", ws.Status.ObservedGeneration, ws.Generation)
		}
		return check(ws)
	})
	return ws
}

// GetConfigMap reads a ConfigMap.
func (k *Kit) GetConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, k.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm)
}

// ConfigMap reads a ConfigMap or fails the test.
func (k *Kit) ConfigMap(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := k.GetConfigMap(ns, name)
	if err != nil {
		t.Fatalf("getting ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

// Condition returns a check that a Workspace condition has the status and reason.
func Condition(condType string, status metav1.ConditionStatus, reason string) func(*v1alpha1.Workspace) error {
	return func(ws *v1alpha1.Workspace) error {
		c := meta.FindStatusCondition(ws.Status.Conditions, condType)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("condition %s is %+v, want %s/%s", condType, c, status, reason)
		}
		return nil
	}
}

// Ready checks that a Workspace is Ready.
func Ready(ws *v1alpha1.Workspace) error {
	return Condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReconciled)(ws)
}

// ConditionMessage is the message of a Workspace condition, or "".
func ConditionMessage(ws *v1alpha1.Workspace, condType string) string {
	if c := meta.FindStatusCondition(ws.Status.Conditions, condType); c != nil {
		return c.Message
	}
	return ""
}

// MustContain reports each wanted substring that s lacks; what names s.
func MustContain(t testing.TB, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}

// MustNotContain reports each unwanted substring that s holds. It does not
// print s: leak checks pass whole ConfigMaps.
func MustNotContain(t testing.TB, what, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("%s contains %q", what, w)
		}
	}
}
