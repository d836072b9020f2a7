package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
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

// publish server-side applies the context ConfigMap unless the one in the
// cluster already holds this hash from our last apply and nobody touched it
// since. Steady state therefore makes no request at all, and neither does a
// restarted manager for a ConfigMap whose last writer was Loadout.
func (r *WorkspaceReconciler) publish(ctx context.Context, ws *v1alpha1.Workspace, res *resources.Result) error {
	key := types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}
	existing := configMapMetadata()
	switch err := r.Get(ctx, key, existing); {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	if existing != nil {
		if !metav1.IsControlledBy(existing, ws) {
			owner := "no controller"
			if ref := metav1.GetControllerOf(existing); ref != nil {
				owner = "controlled by " + ref.Kind + " " + ref.Name
			}
			return &notOwnedError{namespace: key.Namespace, name: key.Name, owner: owner}
		}
		if existing.Annotations[v1alpha1.ContextHashAnnotation] == res.Hash && r.isOurLastApply(existing) {
			return nil
		}
	}
	cm := corev1ac.ConfigMap(key.Name, key.Namespace).
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
	if err := r.Apply(ctx, cm, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying ConfigMap %s: %w", key, err)
	}
	configMapApplies.Inc()
	publishedBytes.Observe(float64(res.Bytes))
	if cm.ResourceVersion != nil {
		r.applied.Store(keyOf(ws), *cm.ResourceVersion)
	}
	return nil
}

// lastWrittenByUs reports whether the newest write to obj was a server-side
// apply by Loadout, from its managed fields: our entry's time is strictly
// after every other manager's. Anyone who changes a field, ours included,
// gets an entry with a newer time; the times have a resolution of one second,
// so a write by someone else in the same second as ours counts as theirs.
func lastWrittenByUs(obj metav1.Object) bool {
	var ours *metav1.Time
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldOwner && e.Operation == metav1.ManagedFieldsOperationApply {
			ours = e.Time
		}
	}
	if ours == nil {
		return false
	}
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldOwner && e.Operation == metav1.ManagedFieldsOperationApply {
			continue
		}
		if e.Time == nil || !ours.After(e.Time.Time) {
			return false
		}
	}
	return true
}
