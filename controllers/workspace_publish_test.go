package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestLastWrittenByUs decides from managed fields whether the newest write to
// a ConfigMap was ours (the create or an apply): strictly newer than every
// other manager's entry.
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
		{"our create, then a hand edit", []metav1.ManagedFieldsEntry{other(FieldOwner, metav1.ManagedFieldsOperationUpdate, 10), other("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 11)}, false},
		{"our create, then our apply", []metav1.ManagedFieldsEntry{other(FieldOwner, metav1.ManagedFieldsOperationUpdate, 10), ours(12)}, true},
		{"a hand edit between our create and our apply", []metav1.ManagedFieldsEntry{other(FieldOwner, metav1.ManagedFieldsOperationUpdate, 10), other("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 11), ours(12)}, true},
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

// TestPublish_ForeignConfigMapTheCacheHasNotSeenIsNotTakenOver: when the
// cache does not hold a same-named ConfigMap yet, publish creates rather
// than applies, so the create fails and the foreign ConfigMap is reported
// NotOwned and left as it was. An apply would have merged into it.
func TestPublish_ForeignConfigMapTheCacheHasNotSeenIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev-context"}, Data: map[string]string{"mine": "yes"}}
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(foreign).Build()
	cacheMiss := interceptor.NewClient(live, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
				return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &WorkspaceReconciler{Client: cacheMiss, APIReader: live}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "ws-uid"}}
	res := &resources.Result{Hash: "sha256:abc", Data: map[string]string{contract.KeySystemPrompt: "CONTEXT"}}

	err := r.publish(ctx, ws, res)
	var notOwned *notOwnedError
	if !errors.As(err, &notOwned) {
		t.Fatalf("publish = %v, want a notOwnedError", err)
	}
	got := &corev1.ConfigMap{}
	if err := live.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != 1 || got.Data["mine"] != "yes" || len(got.OwnerReferences) != 0 || len(got.Annotations) != 0 {
		t.Errorf("foreign ConfigMap changed: data %v, owners %v, annotations %v", got.Data, got.OwnerReferences, got.Annotations)
	}

	// Without the foreign ConfigMap, the same call creates ours.
	if err := live.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := r.publish(ctx, ws, res); err != nil {
		t.Fatalf("publish on a free name: %v", err)
	}
	if err := live.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(got, ws) || got.Annotations[v1alpha1.ContextHashAnnotation] != res.Hash || got.Data[contract.KeySystemPrompt] != "CONTEXT" {
		t.Errorf("created ConfigMap: owners %v, annotations %v, data %v", got.OwnerReferences, got.Annotations, got.Data)
	}
}

// TestPublish_ConfigMapOfAnEarlierWorkspaceIsNamedAsSuch: a Workspace
// re-created under the same name finds its predecessor's ConfigMap until the
// garbage collector removes it; the condition says so instead of naming a
// stranger.
func TestPublish_ConfigMapOfAnEarlierWorkspaceIsNamedAsSuch(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev-context",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Workspace", Name: "dev", UID: "old-uid", Controller: ptr.To(true)}}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(earlier).Build()
	r := &WorkspaceReconciler{Client: c, APIReader: c}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "new-uid"}}
	err := r.publish(context.Background(), ws, &resources.Result{Hash: "sha256:abc", Data: map[string]string{}})
	var notOwned *notOwnedError
	if !errors.As(err, &notOwned) || !strings.Contains(err.Error(), "earlier Workspace dev (uid old-uid)") {
		t.Errorf("publish = %v, want NotOwned naming the earlier Workspace", err)
	}
}
