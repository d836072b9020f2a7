package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// The cache keeps no managed fields of typed objects (nothing reads them),
// but keeps the context ConfigMaps' metadata whole: adoption and the
// context patch decide from their managed fields.
func TestStripManagedFields_TypedObjectsOnly(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:system-prompt":{}}}`)}}
	for _, obj := range []metav1.Object{&v1alpha1.Workspace{}, &v1alpha1.Skill{}, &corev1.Namespace{}, &corev1.ConfigMap{}} {
		obj.SetManagedFields(fields)
		out, err := StripManagedFields(obj)
		if err != nil || out.(metav1.Object).GetManagedFields() != nil {
			t.Errorf("%T: managed fields %v, err %v; want none", obj, out.(metav1.Object).GetManagedFields(), err)
		}
	}
	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: fields}}
	if out, err := StripManagedFields(cm); err != nil || len(out.(*metav1.PartialObjectMetadata).ManagedFields) != 1 {
		t.Errorf("metadata-only ConfigMap lost its managed fields: %v, %v", out, err)
	}
	if out, err := StripManagedFields("not an object"); err != nil || out != "not an object" {
		t.Errorf("a value without metadata: %v, %v; want it back unchanged", out, err)
	}
}
