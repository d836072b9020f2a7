package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// cachedObjects serves workspace.Objects from the manager's cache. Lists skip
// the cache's deep copy: resolution only reads them and copies what it keeps.
// Instructions ConfigMaps are read live through the API reader, because the
// cache holds ConfigMap metadata only.
type cachedObjects struct {
	cache  client.Reader
	reader client.Reader
}

func (o cachedObjects) Skills(ctx context.Context, namespace string) ([]v1alpha1.Skill, error) {
	var list v1alpha1.SkillList
	err := o.cache.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy)
	return list.Items, err
}

func (o cachedObjects) Templates(ctx context.Context, namespace string) ([]v1alpha1.Template, error) {
	var list v1alpha1.TemplateList
	err := o.cache.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy)
	return list.Items, err
}

func (o cachedObjects) Extensions(ctx context.Context, namespace string) ([]v1alpha1.Extension, error) {
	var list v1alpha1.ExtensionList
	err := o.cache.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy)
	return list.Items, err
}

// NamespaceLabels reads a namespace's labels from the cache. A namespace the
// cache does not hold yet (its watch event can trail the Workspace's) is read
// live: deciding trust from a missing label would apply the default level to
// a namespace whose label says otherwise. Only a namespace that does not
// exist has no labels.
func (o cachedObjects) NamespaceLabels(ctx context.Context, namespace string) (map[string]string, error) {
	ns := namespaceMetadata()
	err := o.cache.Get(ctx, types.NamespacedName{Name: namespace}, ns)
	if apierrors.IsNotFound(err) {
		err = o.reader.Get(ctx, types.NamespacedName{Name: namespace}, ns)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return ns.Labels, err
}

func (o cachedObjects) ConfigMapData(ctx context.Context, namespace, name string) (map[string]string, map[string]string, bool, error) {
	var cm corev1.ConfigMap
	if err := o.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, false, nil
		}
		return nil, nil, false, err
	}
	return cm.Data, cm.Labels, true, nil
}
