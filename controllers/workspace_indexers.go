package controllers

import (
	"cmp"
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
)

// Field index keys on Workspaces, for reverse lookups from a changed input to
// exactly the Workspaces that read it.
const (
	// IndexReadNamespaces holds every namespace a Workspace reads: its roots'
	// namespaces and its instructions' namespaces (their trust labels matter).
	IndexReadNamespaces = ".spec.readNamespaces"
	// IndexInstructionConfigMaps holds "namespace/name" of each instructions ConfigMap.
	IndexInstructionConfigMaps = ".spec.instructions.configMapKeyRef"
)

// readNamespaces lists the namespaces a Workspace reads. Roots outside the
// permitted namespaces are left out: the Workspace cannot read them, and it is
// reconciled again when its spec is fixed.
func (r *WorkspaceReconciler) readNamespaces(ws *v1alpha1.Workspace) []string {
	seen := map[string]bool{}
	var out []string
	add := func(ns string) {
		if !seen[ns] && resources.CheckNamespacePermitted(ws, ns, r.Policy.PlatformNamespaces, "") == nil {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	if len(ws.Spec.Roots) == 0 {
		add(ws.Namespace)
		for _, ns := range r.Policy.PlatformNamespaces {
			add(ns)
		}
	}
	for _, root := range ws.Spec.Roots {
		add(cmp.Or(root.Namespace, ws.Namespace))
	}
	for _, in := range ws.Spec.Instructions {
		add(ws.Namespace)
		if in.ConfigMapKeyRef != nil {
			add(cmp.Or(in.ConfigMapKeyRef.Namespace, ws.Namespace))
		}
	}
	return out
}

func instructionConfigMaps(ws *v1alpha1.Workspace) []string {
	var out []string
	for _, in := range ws.Spec.Instructions {
		if ref := in.ConfigMapKeyRef; ref != nil {
			out = append(out, cmp.Or(ref.Namespace, ws.Namespace)+"/"+ref.Name)
		}
	}
	return out
}

// setupIndexes registers the Workspace field indexes with the manager's cache.
func (r *WorkspaceReconciler) setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.Workspace{}, IndexReadNamespaces, func(o client.Object) []string {
		return r.readNamespaces(o.(*v1alpha1.Workspace))
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &v1alpha1.Workspace{}, IndexInstructionConfigMaps, func(o client.Object) []string {
		return instructionConfigMaps(o.(*v1alpha1.Workspace))
	})
}

// workspacesForResource maps a Skill, Template or Extension to the Workspaces
// with a root in its namespace whose selector matches its labels.
func (r *WorkspaceReconciler) workspacesForResource(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, ok := r.listWorkspaces(ctx, IndexReadNamespaces, obj.GetNamespace())
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for i := range workspaces {
		if r.rootSelects(&workspaces[i], obj) {
			reqs = append(reqs, requestFor(&workspaces[i]))
		}
	}
	return reqs
}

// rootSelects reports whether any root of ws reads obj. A selector that does
// not parse selects nothing; the Workspace reports it when reconciled.
func (r *WorkspaceReconciler) rootSelects(ws *v1alpha1.Workspace, obj client.Object) bool {
	roots, err := resources.WorkspaceRoots(ws, r.Policy.PlatformNamespaces)
	if err != nil {
		return false
	}
	for _, root := range roots {
		if root.Namespace != obj.GetNamespace() {
			continue
		}
		if root.Selector == nil {
			return true
		}
		sel, err := metav1.LabelSelectorAsSelector(root.Selector)
		if err == nil && sel.Matches(labels.Set(obj.GetLabels())) {
			return true
		}
	}
	return false
}

// workspacesForNamespace maps a Namespace (its trust label) to the Workspaces
// that read it.
func (r *WorkspaceReconciler) workspacesForNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, _ := r.listWorkspaces(ctx, IndexReadNamespaces, obj.GetName())
	return requestsFor(workspaces)
}

// workspacesForConfigMap maps an instructions ConfigMap to the Workspaces
// that reference it.
func (r *WorkspaceReconciler) workspacesForConfigMap(ctx context.Context, obj client.Object) []reconcile.Request {
	workspaces, _ := r.listWorkspaces(ctx, IndexInstructionConfigMaps, obj.GetNamespace()+"/"+obj.GetName())
	return requestsFor(workspaces)
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
