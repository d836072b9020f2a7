package main

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/resources"
)

// trustPolicy is the manager's trust configuration, as flags.
type trustPolicy struct {
	platform     []string
	defaultTrust v1alpha1.TrustLevel
	namespaces   map[string]corev1.Namespace
}

// of returns the trust level of a namespace from its labels in the manifests.
func (p trustPolicy) of(namespace string) v1alpha1.TrustLevel {
	return resources.TrustOf(namespace, p.namespaces[namespace].Labels, p.platform, p.defaultTrust)
}

// inRoot returns the items of the root's namespace that its selector matches,
// ordered by name.
func inRoot[T any](items []T, root v1alpha1.WorkspaceRoot, meta func(*T) *metav1.ObjectMeta) ([]T, error) {
	sel := labels.Everything()
	if root.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(root.Selector); err != nil {
			return nil, err
		}
	}
	var out []T
	for i := range items {
		m := meta(&items[i])
		if m.Namespace == root.Namespace && sel.Matches(labels.Set(m.Labels)) {
			out = append(out, items[i])
		}
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(meta(&a).Name, meta(&b).Name) })
	return out, nil
}
