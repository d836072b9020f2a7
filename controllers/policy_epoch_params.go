package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
)

// epochsForConfigMap maps a namespace's epoch ConfigMap to its epoch, and a
// platform extension's params ConfigMap to the epochs whose policy carries
// it: the platform's digest covers each imposed hook's params, so a changed
// value is a new policy.
func (r *PolicyEpochReconciler) epochsForConfigMap(ctx context.Context, cm client.Object) []reconcile.Request {
	if cm.GetName() == contract.EpochConfigMap {
		return namespaceOf(ctx, cm)
	}
	var reqs []reconcile.Request
	for _, ns := range r.Policy.PlatformNamespaces {
		var exts v1alpha1.ExtensionList
		if err := r.Client.List(ctx, &exts, client.InNamespace(ns)); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing platform Extensions for a params ConfigMap failed", "namespace", ns)
			return nil
		}
		for _, ext := range exts.Items {
			ref := ext.Spec.ParamRef
			switch {
			case ref == nil || ref.Name != cm.GetName():
			case ref.From == v1alpha1.ParamsFromExtension && ext.Namespace == cm.GetNamespace():
				return r.allNamespaces(ctx)
			case ref.From != v1alpha1.ParamsFromExtension:
				reqs = append(reqs, epochRequest(cm.GetNamespace()))
			}
		}
	}
	return reqs
}
