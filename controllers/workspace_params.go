package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// IndexExtensionParamRef holds the ConfigMap name of an Extension's paramRef.
const IndexExtensionParamRef = ".spec.paramRef.name"

// setupParamsIndex indexes Extensions by their params ConfigMap's name, so a
// changed ConfigMap finds the extensions that read it.
func setupParamsIndex(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Extension{}, IndexExtensionParamRef, func(o client.Object) []string {
		if ref := o.(*v1alpha1.Extension).Spec.ParamRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	})
}

// workspacesForParams maps a ConfigMap to the Workspaces whose context
// carries it as an extension's params: those the extension applies to whose
// params namespace (theirs, or the extension's) is the ConfigMap's.
func (r *WorkspaceReconciler) workspacesForParams(ctx context.Context, cm client.Object) []reconcile.Request {
	var exts v1alpha1.ExtensionList
	if err := r.List(ctx, &exts, client.MatchingFields{IndexExtensionParamRef: cm.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Extensions by params ConfigMap failed", "configMap", cm.GetNamespace()+"/"+cm.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range exts.Items {
		ext := &exts.Items[i]
		for _, req := range r.workspacesForResource(ctx, ext) {
			if workspace.ParamsNamespace(ext, req.Namespace) == cm.GetNamespace() {
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}
