package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StripManagedFields is the manager cache's transform (cache.Options
// DefaultTransform). The managed fields of the typed objects it caches
// (Workspaces, Skills, Templates, Extensions, Namespaces) are read by
// nothing, yet cost about 1.4 KB a Workspace in every process and are
// copied with every Get. Metadata-only objects keep theirs: the context
// ConfigMaps' managed fields are what adoption and the context patch read
// (ownedKeys). An object written back from the cache without them keeps
// the server's: an absent list leaves it unchanged.
func StripManagedFields(obj any) (any, error) {
	if _, metadataOnly := obj.(*metav1.PartialObjectMetadata); metadataOnly {
		return obj, nil
	}
	if o, err := meta.Accessor(obj); err == nil && o.GetManagedFields() != nil {
		o.SetManagedFields(nil)
	}
	return obj, nil
}
