package main

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// objectSet serves workspace.Objects from manifests, the way the controller's
// cache serves them from the cluster, so preview and controller share one
// gatherer. Lists are ordered by object name.

func (s *objectSet) Skills(ctx context.Context, namespace string) ([]v1alpha1.Skill, error) {
	return inNamespace(s.skills, namespace, func(o *v1alpha1.Skill) (string, string) { return o.Namespace, o.Name }), nil
}

func (s *objectSet) Templates(ctx context.Context, namespace string) ([]v1alpha1.Template, error) {
	return inNamespace(s.templates, namespace, func(o *v1alpha1.Template) (string, string) { return o.Namespace, o.Name }), nil
}

func (s *objectSet) Extensions(ctx context.Context, namespace string) ([]v1alpha1.Extension, error) {
	return inNamespace(s.extensions, namespace, func(o *v1alpha1.Extension) (string, string) { return o.Namespace, o.Name }), nil
}

func (s *objectSet) NamespaceLabels(ctx context.Context, namespace string) (map[string]string, error) {
	return s.namespaces[namespace].Labels, nil
}

func (s *objectSet) ConfigMapData(ctx context.Context, namespace, name string) (map[string]string, map[string]string, bool, error) {
	cm, ok := s.configMaps[namespace+"/"+name]
	return cm.Data, cm.Labels, ok, nil
}

func inNamespace[T any](items []T, namespace string, key func(*T) (string, string)) []T {
	var out []T
	for i := range items {
		if ns, _ := key(&items[i]); ns == namespace {
			out = append(out, items[i])
		}
	}
	slices.SortFunc(out, func(a, b T) int {
		_, an := key(&a)
		_, bn := key(&b)
		return cmp.Compare(an, bn)
	})
	return out
}

// errOffline is what a service-backed extension meets in preview: preview
// shows what the manifests declare and never contacts a cluster Service.
var errOffline = errors.New("preview does not contact extension Services; the controller fetches this manifest when the extension is trusted")

// previewLoader loads extensions through the same host as the controller,
// with an outbound client that refuses every call.
var previewLoader = workspace.HostLoader{Outbound: outbound.DoerFunc(func(context.Context, outbound.Request) (*outbound.Response, error) {
	return nil, errOffline
})}

var _ workspace.Objects = (*objectSet)(nil)
