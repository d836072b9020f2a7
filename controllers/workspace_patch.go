package controllers

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// keyGroups are the parts of a context ConfigMap whose keys Loadout sets:
// data keys, labels and annotations.
var keyGroups = []string{"data", "labels", "annotations"}

// keySet is a set of keys per group of keyGroups.
type keySet map[string]map[string]bool

func newKeySet() keySet {
	s := keySet{}
	for _, g := range keyGroups {
		s[g] = map[string]bool{}
	}
	return s
}

// ownedKeys reads existing's managed fields: the keys FieldOwner owns (by
// any operation: the create is an update, later writes patches, and
// releases before merge patches applied) and those any other manager owns.
func ownedKeys(existing *metav1.PartialObjectMetadata) (ours, others keySet, err error) {
	ours, others = newKeySet(), newKeySet()
	for _, f := range existing.ManagedFields {
		if f.FieldsV1 == nil {
			continue
		}
		var set struct {
			Data     map[string]json.RawMessage `json:"f:data"`
			Metadata struct {
				Labels      map[string]json.RawMessage `json:"f:labels"`
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(f.FieldsV1.GetRawBytes(), &set); err != nil {
			return nil, nil, fmt.Errorf("managed fields of %s: %w", f.Manager, err)
		}
		into := others
		if f.Manager == FieldOwner {
			into = ours
		}
		for group, m := range map[string]map[string]json.RawMessage{"data": set.Data, "labels": set.Metadata.Labels, "annotations": set.Metadata.Annotations} {
			for k := range m {
				into[group][strings.TrimPrefix(k, "f:")] = true
			}
		}
	}
	return ours, others, nil
}

// desiredKeys is what cm sets, per group.
func desiredKeys(cm *corev1ac.ConfigMapApplyConfiguration) map[string]map[string]string {
	return map[string]map[string]string{"data": cm.Data, "labels": cm.Labels, "annotations": cm.Annotations}
}

// contextPatch is the JSON merge patch that leaves existing as a forced
// server-side apply of cm would: every key, label and annotation cm sets
// takes cm's value; one that Loadout set before and cm no longer carries is
// removed, unless another manager owns it too (an apply leaves a field a
// second manager still claims); everything else (another manager's keys,
// labels and owner references) is left alone. The UID is a precondition:
// a merge patch cannot change it, so a ConfigMap replaced since the cache
// saw it fails the write instead of being taken over. Owner references are
// not in it: the caller has found ours controlling existing
// (checkControlled), and a merge patch would replace the whole list.
func contextPatch(existing *metav1.PartialObjectMetadata, cm *corev1ac.ConfigMapApplyConfiguration) ([]byte, error) {
	ours, others, err := ownedKeys(existing)
	if err != nil {
		return nil, err
	}
	desired := desiredKeys(cm)
	parts := map[string]map[string]any{}
	for _, group := range keyGroups {
		part := map[string]any{}
		for k, v := range desired[group] {
			part[k] = v
		}
		for k := range ours[group] {
			if _, keep := desired[group][k]; !keep && !others[group][k] {
				part[k] = nil
			}
		}
		parts[group] = part
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": existing.UID, "labels": parts["labels"], "annotations": parts["annotations"]},
		"data":     parts["data"],
	})
}
