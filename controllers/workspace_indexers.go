package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Field index keys on Workspaces, for reverse lookups from a changed input to
// exactly the Workspaces that read it. Both indexes and the map functions use
// workspace.ReadsOf, the same answer Gather reads by.
const (
	// IndexReadNamespaces holds every namespace a Workspace reads: its roots'
	// namespaces and its instructions' namespaces (their trust labels matter).
	IndexReadNamespaces = ".spec.readNamespaces"
	// IndexInstructionConfigMaps holds "namespace/name" of each instructions ConfigMap.
	IndexInstructionConfigMaps = ".spec.instructions.configMapKeyRef"
)

// setupIndexes registers the Workspace field indexes with the manager's cache.
func (r *WorkspaceReconciler) setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.Workspace{}, IndexReadNamespaces, func(o client.Object) []string {
		return workspace.ReadsOf(o.(*v1alpha1.Workspace), r.Policy).Namespaces()
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1alpha1.Workspace{}, IndexInstructionConfigMaps, func(o client.Object) []string {
		return workspace.ReadsOf(o.(*v1alpha1.Workspace), r.Policy).ConfigMaps()
	}); err != nil {
		return err
	}
	if err := setupParamsIndex(ctx, mgr); err != nil {
		return err
	}
	return idx.IndexField(ctx, &v1alpha1.Workspace{}, IndexOutputConfigMap, func(o client.Object) []string {
		return []string{o.(*v1alpha1.Workspace).ConfigMapName()}
	})
}

// workspacesForResource maps a Skill, Template or Extension to the Workspaces
// with a root in its namespace whose selector matches its labels, and an
// imposed platform Extension to every Workspace (its namespace selector is
// Gather's to apply: a Workspace it does not select reconciles to no write).
// An update is mapped for the old and the new object alike, so an Extension
// that stops being imposed still reaches the Workspaces it left.
func (r *WorkspaceReconciler) workspacesForResource(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, ok := r.listWorkspaces(ctx, IndexReadNamespaces, obj.GetNamespace())
	if !ok {
		return nil
	}
	ext, _ := obj.(*v1alpha1.Extension)
	var reqs []reconcile.Request
	for i := range workspaces {
		reads := workspace.ReadsOf(&workspaces[i], r.Policy)
		if (ext != nil && reads.Imposes(ext)) || reads.Selects(obj.GetNamespace(), obj.GetLabels()) {
			reqs = append(reqs, requestFor(&workspaces[i]))
		}
	}
	return reqs
}

// workspacesForNamespace maps a Namespace (its trust label) to the Workspaces
// that read it.
func (r *WorkspaceReconciler) workspacesForNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, _ := r.listWorkspaces(ctx, IndexReadNamespaces, obj.GetName())
	return requestsFor(workspaces)
}

// workspacesForConfigMap maps an instructions ConfigMap to the Workspaces
// that reference it, an extension's params ConfigMap to the Workspaces that
// carry it, and any ConfigMap to the Workspaces of its namespace that
// publish to its name (a deleted one may be theirs to create now).
func (r *WorkspaceReconciler) workspacesForConfigMap(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, _ := r.listWorkspaces(ctx, IndexInstructionConfigMaps, obj.GetNamespace()+"/"+obj.GetName())
	reqs := append(requestsFor(workspaces), r.workspacesForParams(ctx, obj)...)
	return append(reqs, r.workspacesSharingOutput(ctx, obj.GetNamespace(), obj.GetName())...)
}

// workspacesForDeletedWorkspace maps a deleted Workspace to the others of
// its namespace that publish to the same ConfigMap name.
func (r *WorkspaceReconciler) workspacesForDeletedWorkspace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.workspacesSharingOutput(ctx, obj.GetNamespace(), obj.(*v1alpha1.Workspace).ConfigMapName())
}

// listWorkspaces lists through a field index. A failure is logged and maps to
// nothing: a map function cannot return an error.
func (r *WorkspaceReconciler) listWorkspaces(ctx context.Context, index, value string) ([]v1alpha1.Workspace, bool) {
	var list v1alpha1.WorkspaceList
	if err := r.List(ctx, &list, client.MatchingFields{index: value}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Workspaces by index failed", "index", index, "value", value)
		return nil, false
	}
	return list.Items, true
}

func requestFor(ws *v1alpha1.Workspace) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}}
}

func requestsFor(workspaces []v1alpha1.Workspace) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(workspaces))
	for i := range workspaces {
		reqs = append(reqs, requestFor(&workspaces[i]))
	}
	return reqs
}

// configMapMetadata is the metadata-only form of a ConfigMap: the controller
// never caches ConfigMap data, only what it needs to map and compare.
func configMapMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

func namespaceMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return m
}
