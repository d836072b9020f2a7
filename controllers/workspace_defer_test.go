package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// TestReconcile_StatusPatchWaitsBehindTheContextWrite: a reconcile that
// applies a new context over the existing ConfigMap does not patch the
// status in the same pass;
// it requeues the Workspace at statusPriority, below fresh events, so a
// change reaching many Workspaces writes all their contexts first. The next
// pass writes no ConfigMap and patches the status once. Still one write of
// each kind per change, and none at rest.
func TestReconcile_StatusPatchWaitsBehindTheContextWrite(t *testing.T) {
	ctx := context.Background()
	scheme := fakeScheme()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "ws-uid", Generation: 1},
		Spec: v1alpha1.WorkspaceSpec{Instructions: []v1alpha1.InstructionSource{{Inline: "Be brief."}}}}
	var configMapWrites, statusPatches int
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(ns, ws).WithStatusSubresource(ws).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				configMapWrites++
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind == "ConfigMap" {
				configMapWrites++
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			statusPatches++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	r := &WorkspaceReconciler{Client: c, APIReader: c, Loader: workspace.HostLoader{}}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ws)}

	// A create happens once in a Workspace's life: its status follows at once.
	created, err := r.Reconcile(ctx, req)
	if err != nil || configMapWrites != 1 || statusPatches != 1 || !created.IsZero() {
		t.Fatalf("create: err %v, %d ConfigMap writes, %d status patches, result %+v; want 1, 1 and done", err, configMapWrites, statusPatches, created)
	}

	// A new context over an existing ConfigMap: the patch now, the status later.
	current := &v1alpha1.Workspace{}
	if err := c.Get(ctx, req.NamespacedName, current); err != nil {
		t.Fatal(err)
	}
	current.Spec.Instructions[0].Inline = "Be briefer."
	current.Generation = 2
	if err := c.Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	first, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if configMapWrites != 2 || statusPatches != 1 {
		t.Fatalf("first pass: %d ConfigMap writes, %d status patches; want 2 and 1", configMapWrites, statusPatches)
	}
	if first.Priority == nil || *first.Priority != statusPriority || first.RequeueAfter <= 0 {
		t.Fatalf("first pass result %+v, want a requeue at priority %d", first, statusPriority)
	}

	second, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if configMapWrites != 2 || statusPatches != 2 || !second.IsZero() {
		t.Fatalf("second pass: %d ConfigMap writes, %d status patches, result %+v; want 2, 2 and done", configMapWrites, statusPatches, second)
	}
	got := &v1alpha1.Workspace{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Context == nil || got.Status.Context.Hash == "" || got.Status.ObservedGeneration != got.Generation {
		t.Fatalf("status after the second pass: %+v (generation %d)", got.Status, got.Generation)
	}

	// At rest: nothing to write, nothing requeued.
	third, err := r.Reconcile(ctx, req)
	if err != nil || configMapWrites != 2 || statusPatches != 2 || !third.IsZero() {
		t.Fatalf("at rest: err %v, %d ConfigMap writes, %d status patches, result %+v", err, configMapWrites, statusPatches, third)
	}
}
