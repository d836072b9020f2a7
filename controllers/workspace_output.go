package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// IndexOutputConfigMap holds the name of the ConfigMap a Workspace publishes
// to (spec.output.configMapName or <name>-context), to find the Workspaces of
// a namespace that claim the same one.
const IndexOutputConfigMap = ".spec.output.configMapName"

// Two Workspaces of a namespace may resolve to one ConfigMap name (one's
// default is the other's explicit output). The older one keeps it: otherwise
// a tenant could create a Workspace whose output is another Workspace's
// default name while that one is being re-created, and have agents admitted
// for the other Workspace mount its context. The younger gets
// ConfigMapNameConflict naming the owner; the ConfigMap carries the
// signature of its owner only, which hostd checks against the Workspace it
// serves.

// created orders Workspaces by age: creation time; within one second (the
// resolution of creation timestamps) the one whose default name it is, then
// by name.
func created(a, b *v1alpha1.Workspace) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if aDefault, bDefault := a.Spec.Output == nil || a.Spec.Output.ConfigMapName == "", b.Spec.Output == nil || b.Spec.Output.ConfigMapName == ""; aDefault != bDefault {
		return aDefault
	}
	return a.Name < b.Name
}

// sharingOutput lists the Workspaces of namespace that publish to ConfigMap
// name, through the field index. A client without the index (a reconcile run
// by hand on a direct client) lists the namespace and filters. The items are
// the cache's own (no deep copy: every reconcile and every ConfigMap event
// asks): callers only read them.
func (r *WorkspaceReconciler) sharingOutput(ctx context.Context, namespace, name string) ([]v1alpha1.Workspace, error) {
	var list v1alpha1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{IndexOutputConfigMap: name}, client.UnsafeDisableDeepCopy); err == nil {
		return list.Items, nil
	}
	if err := r.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing Workspaces that publish to ConfigMap %s/%s: %w", namespace, name, err)
	}
	out := list.Items[:0]
	for _, w := range list.Items {
		if w.ConfigMapName() == name {
			out = append(out, w)
		}
	}
	return out, nil
}

// olderClaimant returns the oldest other Workspace of ws's namespace that
// publishes to the same ConfigMap name and was created before ws, or nil.
func (r *WorkspaceReconciler) olderClaimant(ctx context.Context, ws *v1alpha1.Workspace) (*v1alpha1.Workspace, error) {
	claimants, err := r.sharingOutput(ctx, ws.Namespace, ws.ConfigMapName())
	if err != nil {
		return nil, err
	}
	var oldest *v1alpha1.Workspace
	for i := range claimants {
		other := &claimants[i]
		if other.UID == ws.UID || !other.DeletionTimestamp.IsZero() || !created(other, ws) {
			continue
		}
		if oldest == nil || created(other, oldest) {
			oldest = other
		}
	}
	return oldest, nil
}

// conflictMessage explains a ConfigMapNameConflict.
func conflictMessage(ws, owner *v1alpha1.Workspace) string {
	return fmt.Sprintf("ConfigMap %s/%s is the output of Workspace %s, created before this one (%s); the older Workspace keeps it: "+
		"re-create this Workspace with another spec.output.configMapName", ws.Namespace, ws.ConfigMapName(), owner.Name,
		owner.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
}

// takeOverFromYounger makes ws the controller of its ConfigMap when the
// current controller is a younger Workspace claiming the same name (it got
// there first while ws could not publish). The owner reference is replaced
// under the ConfigMap's resourceVersion, so a concurrent write fails rather
// than being lost; the caller then publishes as usual.
func (r *WorkspaceReconciler) takeOverFromYounger(ctx context.Context, ws *v1alpha1.Workspace, existing *metav1.PartialObjectMetadata) (bool, error) {
	ref := metav1.GetControllerOf(existing)
	if ref == nil || ref.Kind != v1alpha1.WorkspaceKind || ref.Name == ws.Name {
		return false, nil
	}
	holder := &v1alpha1.Workspace{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ref.Name}, holder); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if holder.UID != ref.UID || holder.ConfigMapName() != ws.ConfigMapName() || !created(ws, holder) {
		return false, nil
	}
	return true, r.setController(ctx, ws, existing, "taking ConfigMap %s/%s over from the younger Workspace %s", ws.Namespace, ws.ConfigMapName(), holder.Name)
}

// workspacesSharingOutput maps a deleted Workspace, or a ConfigMap, to the
// Workspaces of its namespace that publish to that ConfigMap name: when the
// older claimant goes, the next one takes the name over.
func (r *WorkspaceReconciler) workspacesSharingOutput(ctx context.Context, namespace, configMap string) []reconcile.Request {
	workspaces, err := r.sharingOutput(ctx, namespace, configMap)
	if err != nil {
		return nil
	}
	return requestsFor(workspaces)
}

// setController replaces existing's owner references with ws as controller,
// under existing's resourceVersion, so a concurrent write fails rather than
// being lost.
func (r *WorkspaceReconciler) setController(ctx context.Context, ws *v1alpha1.Workspace, existing *metav1.PartialObjectMetadata, format string, args ...any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": existing.ResourceVersion,
		"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(ws, v1alpha1.GroupVersion.WithKind(v1alpha1.WorkspaceKind))},
	}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, existing, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return nil
}
