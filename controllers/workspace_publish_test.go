package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLastWrittenByUs decides from managed fields whether the newest write to
// a ConfigMap was our apply: strictly newer than every other manager's entry.
func TestLastWrittenByUs(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: time.Unix(1_800_000_000+int64(s), 0)} }
	ours := func(s int) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply, Time: at(s)}
	}
	other := func(manager string, op metav1.ManagedFieldsOperationType, s int) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: at(s)}
	}
	for _, tc := range []struct {
		name   string
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{"only our apply", []metav1.ManagedFieldsEntry{ours(10)}, true},
		{"our apply after a label from GitOps", []metav1.ManagedFieldsEntry{other("argocd", metav1.ManagedFieldsOperationApply, 5), ours(10)}, true},
		{"a hand edit after our apply", []metav1.ManagedFieldsEntry{ours(10), other("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 11)}, false},
		{"a hand edit in the same second", []metav1.ManagedFieldsEntry{ours(10), other("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 10)}, false},
		{"an update under our name is not our apply", []metav1.ManagedFieldsEntry{ours(10), other(FieldOwner, metav1.ManagedFieldsOperationUpdate, 12)}, false},
		{"an entry without a time", []metav1.ManagedFieldsEntry{ours(10), {Manager: "someone", Operation: metav1.ManagedFieldsOperationUpdate}}, false},
		{"never applied by us", []metav1.ManagedFieldsEntry{other("kubectl-create", metav1.ManagedFieldsOperationUpdate, 1)}, false},
		{"no managed fields", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{ManagedFields: tc.fields}
			if got := lastWrittenByUs(obj); got != tc.want {
				t.Errorf("lastWrittenByUs = %v, want %v", got, tc.want)
			}
		})
	}
}
