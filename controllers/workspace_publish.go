package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
)

// notOwnedError reports a ConfigMap of the output name that this Workspace
// does not control. It is never overwritten.
type notOwnedError struct{ namespace, name, owner string }

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("ConfigMap %s/%s exists and is not controlled by this Workspace (%s); it is left untouched: delete it or set spec.output.configMapName", e.namespace, e.name, e.owner)
}

// publish writes the context ConfigMap unless the one in the cluster already
// holds this hash and Loadout's apply was its last write. Steady state
// therefore makes no request at all, and neither does a restarted manager.
//
// A ConfigMap the cache does not hold is created, never applied: an apply
// would merge into a same-named ConfigMap that the cache has not seen yet
// and take it over, and a create fails instead. Everything after that is a
// server-side apply that forces ownership of our fields.
func (r *WorkspaceReconciler) publish(ctx context.Context, ws *v1alpha1.Workspace, res *resources.Result) error {
	key := types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}
	cm := contextConfigMap(ws, key, res)
	existing := configMapMetadata()
	err := r.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		created, cerr := r.create(ctx, cm)
		if cerr == nil {
			r.recordApply(ws, res, created)
			return nil
		}
		if !apierrors.IsAlreadyExists(cerr) {
			return fmt.Errorf("creating ConfigMap %s: %w", key, cerr)
		}
		err = r.APIReader.Get(ctx, key, existing) // it exists: whose is it?
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	if !metav1.IsControlledBy(existing, ws) {
		owner := "no controller"
		if ref := metav1.GetControllerOf(existing); ref != nil {
			owner = "controlled by " + ref.Kind + " " + ref.Name
			if ref.Kind == "Workspace" && ref.Name == ws.Name {
				// A deleted Workspace of the same name: the garbage collector
				// removes its ConfigMap, and that deletion triggers a publish.
				owner = "controlled by an earlier Workspace " + ref.Name + " (uid " + string(ref.UID) + ") that the garbage collector will remove"
			}
		}
		return &notOwnedError{namespace: key.Namespace, name: key.Name, owner: owner}
	}
	if existing.Annotations[v1alpha1.ContextHashAnnotation] == res.Hash && r.isOurLastApply(existing) {
		return nil
	}
	if err := r.Apply(ctx, cm, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying ConfigMap %s: %w", key, err)
	}
	r.recordApply(ws, res, ptr.Deref(cm.ResourceVersion, ""))
	return nil
}

// contextConfigMap is the published ConfigMap: the context data, the hash
// annotation, the Workspace label and the Workspace as controller.
func contextConfigMap(ws *v1alpha1.Workspace, key types.NamespacedName, res *resources.Result) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(key.Name, key.Namespace).
		WithLabels(map[string]string{v1alpha1.WorkspaceLabel: ws.Name}).
		WithAnnotations(map[string]string{v1alpha1.ContextHashAnnotation: res.Hash}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(v1alpha1.GroupVersion.String()).
			WithKind("Workspace").
			WithName(ws.Name).
			WithUID(ws.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithData(res.Data)
}

// create creates the ConfigMap described by an apply configuration (the
// same JSON) and returns its resourceVersion.
func (r *WorkspaceReconciler) create(ctx context.Context, ac *corev1ac.ConfigMapApplyConfiguration) (string, error) {
	b, err := json.Marshal(ac)
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(b, cm); err != nil {
		return "", err
	}
	if err := r.Create(ctx, cm, client.FieldOwner(FieldOwner)); err != nil {
		return "", err
	}
	return cm.ResourceVersion, nil
}

// recordApply counts a write and remembers the resourceVersion it left, so
// the watch event it causes is recognised as ours.
func (r *WorkspaceReconciler) recordApply(ws *v1alpha1.Workspace, res *resources.Result, resourceVersion string) {
	configMapApplies.Inc()
	publishedBytes.Observe(float64(res.Bytes))
	if resourceVersion != "" {
		r.applied.Store(keyOf(ws), resourceVersion)
	}
}

// lastWrittenByUs reports whether the newest write to obj was Loadout's (its
// first create or a later apply), from its managed fields: our newest entry's
// time is strictly after every other manager's. Anyone who changes a field, ours included,
// gets an entry with a newer time; the times have a resolution of one second,
// so a write by someone else in the same second as ours counts as theirs.
func lastWrittenByUs(obj metav1.Object) bool {
	var ours *metav1.Time
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldOwner && e.Time != nil && (ours == nil || e.Time.After(ours.Time)) {
			ours = e.Time
		}
	}
	if ours == nil {
		return false
	}
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldOwner {
			continue
		}
		if e.Time == nil || !ours.After(e.Time.Time) {
			return false
		}
	}
	return true
}
