package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
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
func (k *Kit) NewNamespace(t testing.TB, trust vocab.TrustLevel) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: k.NamespacePrefix}}
	if trust != "" {
		ns.Labels = map[string]string{vocab.TrustLabel: string(trust)}
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
	Eventually(t, k.Timeout, f)
}

// Eventually retries f until it returns nil, or fails the test with f's last
// error when timeout passes.
func Eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", timeout, err)
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

// Published waits for the Workspace to be Ready, for its ConfigMap to hold
// exactly what the status says was published, and for the system prompt to
// hold every want; it returns both. Tests that record a "before" state name
// what it must hold: the first reconcile may run before the informer cache
// has every input, and publish a context that a later reconcile replaces.
func (k *Kit) Published(t testing.TB, ns, name string, wants ...string) (*v1alpha1.Workspace, *corev1.ConfigMap) {
	t.Helper()
	var ws *v1alpha1.Workspace
	var cm *corev1.ConfigMap
	k.Eventually(t, func() error {
		ws = k.WaitFor(t, ns, name, Ready)
		var err error
		if cm, err = k.GetConfigMap(ns, ws.ConfigMapName()); err != nil {
			return err
		}
		if err := Consistent(ws, cm); err != nil {
			return err
		}
		for _, want := range wants {
			if !strings.Contains(cm.Data[contract.KeySystemPrompt], want) {
				return fmt.Errorf("published context does not hold %q yet", want)
			}
		}
		return nil
	})
	return ws, cm
}

// ManifestOf decodes the manifest.json of a published context; t fails
// when it does not decode.
func ManifestOf(t testing.TB, cm *corev1.ConfigMap) contract.Manifest {
	t.Helper()
	var m contract.Manifest
	if err := json.Unmarshal([]byte(cm.Data[contract.KeyManifest]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Consistent checks that the ConfigMap holds exactly what the status says
// was published: annotation, data hash and status hash agree.
func Consistent(ws *v1alpha1.Workspace, cm *corev1.ConfigMap) error {
	if ws.Status.Context == nil {
		return fmt.Errorf("no status.context")
	}
	h := ws.Status.Context.Hash
	if a := cm.Annotations[vocab.ContextHashAnnotation]; a != h {
		return fmt.Errorf("ConfigMap annotation %q, status hash %q", a, h)
	}
	if d := resources.ContextHash(cm.Data); d != h {
		return fmt.Errorf("ConfigMap data hashes to %q, status hash %q", d, h)
	}
	return nil
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
func Condition(condType vocab.ConditionType, status metav1.ConditionStatus, reason vocab.ConditionReason) func(*v1alpha1.Workspace) error {
	return func(ws *v1alpha1.Workspace) error {
		c := meta.FindStatusCondition(ws.Status.Conditions, string(condType))
		if c == nil || c.Status != status || c.Reason != string(reason) {
			return fmt.Errorf("condition %s is %+v, want %s/%s", condType, c, status, reason)
		}
		return nil
	}
}

// Ready checks that a Workspace is Ready.
func Ready(ws *v1alpha1.Workspace) error {
	return Condition(vocab.ConditionReady, metav1.ConditionTrue, vocab.ReasonReconciled)(ws)
}

// Winning checks that a Workspace is Ready and its catalog has a winner of the
// kind and name. Tests that record a "before" state wait for it, since the
// first reconcile may run before the informer cache holds every input.
func Winning(kind, name string) func(*v1alpha1.Workspace) error {
	return func(ws *v1alpha1.Workspace) error {
		if err := Ready(ws); err != nil {
			return err
		}
		for _, w := range ws.Status.Winners {
			if w.Kind == kind && w.Name == name {
				return nil
			}
		}
		return fmt.Errorf("no %s %q among the winners %+v", kind, name, ws.Status.Winners)
	}
}

// Counted checks that a Workspace is Ready and its catalog counts are want.
func Counted(want v1alpha1.CatalogCounts) func(*v1alpha1.Workspace) error {
	return func(ws *v1alpha1.Workspace) error {
		if err := Ready(ws); err != nil {
			return err
		}
		if ws.Status.Catalog == nil || *ws.Status.Catalog != want {
			return fmt.Errorf("catalog %+v, want %+v", ws.Status.Catalog, want)
		}
		return nil
	}
}

// ConditionMessage is the message of a Workspace condition, or "".
func ConditionMessage(ws *v1alpha1.Workspace, condType vocab.ConditionType) string {
	if c := meta.FindStatusCondition(ws.Status.Conditions, string(condType)); c != nil {
		return c.Message
	}
	return ""
}

// MustContain reports each wanted substring that s lacks; what names s. It
// is resourcestest's: the envtest suites and the engine's neighbours report
// a missing substring the same way.
var MustContain = resourcestest.MustContain

// MustBeRefusedByAdmission fails unless err is the API server's admission
// refusal (Forbidden or Invalid) naming every want; what names the request.
func MustBeRefusedByAdmission(t testing.TB, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: allowed, want admission to refuse it", what)
		return
	}
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("%s: %v, want admission's refusal", what, err)
		return
	}
	MustContain(t, what, err.Error(), wants...)
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
