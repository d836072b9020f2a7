package workspace

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/resources"
)

// ContextConfigMap is the one shape of a Workspace's published ConfigMap:
// the context data, the hash annotation, the Workspace label and, for a
// Workspace that exists in a cluster (it has a UID), the Workspace as
// controller. The controller applies it and `loadout preview` prints it, so
// both agree on every byte they share.
//
// No label or annotation of the Workspace is copied: GitOps tools (Argo CD's
// tracking label, Flux's kustomize labels) track objects by them, and a
// copied one would make the ConfigMap look like part of the user's Git
// source (docs/gitops.md).
func ContextConfigMap(ws *v1alpha1.Workspace, res *resources.Result) *corev1ac.ConfigMapApplyConfiguration {
	cm := corev1ac.ConfigMap(ws.ConfigMapName(), ws.Namespace).
		WithLabels(map[string]string{vocab.WorkspaceLabel: ws.Name}).
		WithAnnotations(map[string]string{vocab.ContextHashAnnotation: res.Hash}).
		WithData(res.Data)
	if ws.UID != "" {
		cm.WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(v1alpha1.GroupVersion.String()).
			WithKind(v1alpha1.WorkspaceKind).
			WithName(ws.Name).
			WithUID(ws.UID).
			WithController(true).
			WithBlockOwnerDeletion(true))
	}
	return cm
}
