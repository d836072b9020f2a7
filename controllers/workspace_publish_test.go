package controllers

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// fakeScheme knows the kinds the Workspace reconciler reads and writes, for
// fake clients.
func fakeScheme() *runtime.Scheme {
	return kubescheme.New()
}

// TestPublish_ForeignConfigMapTheCacheHasNotSeenIsNotTakenOver: when the
// cache does not hold a same-named ConfigMap yet, publish creates rather
// than applies, so the create fails and the foreign ConfigMap is reported
// NotOwned and left as it was. An apply would have merged into it.
func TestPublish_ForeignConfigMapTheCacheHasNotSeenIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	scheme := fakeScheme()
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

	_, err := r.publish(ctx, ws, res)
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
	if _, err := r.publish(ctx, ws, res); err != nil {
		t.Fatalf("publish on a free name: %v", err)
	}
	if err := live.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(got, ws) || got.Annotations[vocab.ContextHashAnnotation] != res.Hash || got.Data[contract.KeySystemPrompt] != "CONTEXT" {
		t.Errorf("created ConfigMap: owners %v, annotations %v, data %v", got.OwnerReferences, got.Annotations, got.Data)
	}
}

// TestPublish_ConfigMapOfAnEarlierWorkspaceIsNamedAsSuch: a Workspace
// re-created under the same name finds its predecessor's ConfigMap until the
// garbage collector removes it; the condition says so instead of naming a
// stranger.
func TestPublish_ConfigMapOfAnEarlierWorkspaceIsNamedAsSuch(t *testing.T) {
	scheme := fakeScheme()
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev-context",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Workspace", Name: "dev", UID: "old-uid", Controller: ptr.To(true)}}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(earlier).Build()
	r := &WorkspaceReconciler{Client: c, APIReader: c}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "new-uid"}}
	_, err := r.publish(context.Background(), ws, &resources.Result{Hash: "sha256:abc", Data: map[string]string{}})
	var notOwned *notOwnedError
	if !errors.As(err, &notOwned) || !strings.Contains(err.Error(), "earlier Workspace dev (uid old-uid), deleted or being deleted") {
		t.Errorf("publish = %v, want NotOwned naming the earlier Workspace", err)
	}
}

// TestOurWrite_EventsDuringAWriteAreAttributedExactly: the watch event of our
// own write can arrive before the write returns. While a write is in flight,
// an event carrying its hash is taken for ours; when the write returns, an
// event with another resourceVersion (someone else wrote meanwhile) makes
// publish report an overlap, so the Workspace is looked at again and a hand
// edit is still reverted.
func TestOurWrite_EventsDuringAWriteAreAttributedExactly(t *testing.T) {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", UID: "ws-uid"}}
	event := func(rv, hash string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev-context", ResourceVersion: rv,
			Annotations:     map[string]string{vocab.ContextHashAnnotation: hash},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Workspace", Name: "dev", UID: "ws-uid", Controller: ptr.To(true)}}}}
	}
	res := &resources.Result{Hash: "sha256:new"}
	for _, tc := range []struct {
		name           string
		during         []*corev1.ConfigMap // events delivered while the write is in flight
		returned       string              // the write's resourceVersion
		wantClaimed    []bool
		wantOverlapped bool
	}{
		{"our own event outruns the response", []*corev1.ConfigMap{event("7", "sha256:new")}, "7", []bool{true}, false},
		{"someone else writes right after us", []*corev1.ConfigMap{event("7", "sha256:new"), event("8", "sha256:new")}, "7", []bool{true, true}, true},
		{"an event of an older hash is not ours", []*corev1.ConfigMap{event("6", "sha256:old")}, "7", []bool{false}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &WorkspaceReconciler{}
			overlapped, err := r.write(ws, res, "", func() (string, error) {
				for i, e := range tc.during {
					if got := r.ourWrite(e); got != tc.wantClaimed[i] {
						t.Errorf("event %s taken for ours = %v, want %v", e.ResourceVersion, got, tc.wantClaimed[i])
					}
				}
				return tc.returned, nil
			})
			if err != nil || overlapped != tc.wantOverlapped {
				t.Errorf("write = %v, %v; want overlapped %v", overlapped, err, tc.wantOverlapped)
			}
			// After the write, only its own resourceVersion is ours.
			if !r.ourWrite(event(tc.returned, res.Hash)) || r.ourWrite(event("9", res.Hash)) {
				t.Error("after the write, events are not attributed by its resourceVersion")
			}
		})
	}
}

// TestPublish_ReplacedConfigMapIsNotTakenOver runs against the API server: the
// cache still shows our ConfigMap, but it was replaced by a foreign one of
// the same name. The patch carries the cached UID as a precondition, fails,
// and the Workspace reports NotOwned; the foreign ConfigMap is untouched.
func TestPublish_ReplacedConfigMapIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev", UID: "ws-uid"}}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev-context"}, Data: map[string]string{"mine": "yes"}}
	kit.Create(t, foreign)
	live, err := client.NewWithWatch(adminConfig, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	staleCache := interceptor.NewClient(live, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok && key.Name == "dev-context" {
				// What the cache remembers: our ConfigMap, since replaced.
				m.Namespace, m.Name, m.UID, m.ResourceVersion = ns, "dev-context", "uid-of-the-deleted-one", "1"
				m.Annotations = map[string]string{vocab.ContextHashAnnotation: "sha256:old"}
				m.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Workspace", Name: "dev", UID: ws.UID, Controller: ptr.To(true)}}
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &WorkspaceReconciler{Client: staleCache, APIReader: live}
	_, err = r.publish(ctx, ws, &resources.Result{Hash: "sha256:new", Data: map[string]string{contract.KeySystemPrompt: "CONTEXT"}})
	var notOwned *notOwnedError
	if !errors.As(err, &notOwned) {
		t.Fatalf("publish = %v, want a notOwnedError", err)
	}
	got := kit.ConfigMap(t, ns, "dev-context")
	if got.ResourceVersion != foreign.ResourceVersion || len(got.Data) != 1 || len(got.OwnerReferences) != 0 {
		t.Errorf("foreign ConfigMap changed: %+v", got)
	}
}

// TestPublish_PatchLeavesWhatAForcedApplyWould: a context written over an
// existing ConfigMap is a merge patch, and it leaves the ConfigMap as a
// forced server-side apply of the same shape would: what Loadout set before
// and no longer sets (a data key, the held context's annotation) is gone;
// another manager's label and data key, and a key both set, stay; our owner
// reference stays. Against the real API server, which computes the managed
// fields the patch reads.
func TestPublish_PatchLeavesWhatAForcedApplyWould(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	r := &WorkspaceReconciler{Client: k8sClient, APIReader: k8sClient}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "patched", UID: "patched-uid"}}
	held := &resources.Result{Hash: "sha256:one", Data: map[string]string{contract.KeySystemPrompt: "ONE", contract.KeySkills: "[]", "shared.md": "both"}}
	cm := workspace.ContextConfigMap(ws, held).WithAnnotations(map[string]string{workspace.ContentFromAnnotation: "sha256:zero"})
	if _, err := r.publishConfigMap(ctx, ws, held, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := r.publishConfigMap(ctx, ws, held, workspace.ContextConfigMap(ws, held).WithAnnotations(map[string]string{workspace.ContentFromAnnotation: "sha256:zero", vocab.ContextHashAnnotation: "sha256:one-again"})); err != nil {
		t.Fatal(err) // a second write, now a patch: Loadout owns by update and by patch
	}
	other := corev1ac.ConfigMap(ws.ConfigMapName(), ns).
		WithLabels(map[string]string{"gitops.example.com/synced": "true"}).
		WithData(map[string]string{"theirs": "kept", "shared.md": "both"})
	if err := k8sClient.Apply(ctx, other, client.FieldOwner("gitops-agent"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}

	recovered := &resources.Result{Hash: "sha256:two", Data: map[string]string{contract.KeySystemPrompt: "TWO"}}
	w, err := r.publish(ctx, ws, recovered)
	if err != nil || !w.applied {
		t.Fatalf("publish = %+v, %v; want a write", w, err)
	}
	got := kit.ConfigMap(t, ns, ws.ConfigMapName())
	want := map[string]string{contract.KeySystemPrompt: "TWO", "theirs": "kept", "shared.md": "both"}
	if !maps.Equal(got.Data, want) {
		t.Errorf("data = %v, want %v", got.Data, want)
	}
	if _, ok := got.Annotations[workspace.ContentFromAnnotation]; ok || got.Annotations[vocab.ContextHashAnnotation] != "sha256:two" {
		t.Errorf("annotations = %v: the held context's annotation must go, the hash move", got.Annotations)
	}
	if got.Labels["gitops.example.com/synced"] != "true" || got.Labels[vocab.WorkspaceLabel] != ws.Name {
		t.Errorf("labels = %v", got.Labels)
	}
	if !metav1.IsControlledBy(got, ws) || len(got.OwnerReferences) != 1 {
		t.Errorf("owner references = %v", got.OwnerReferences)
	}
}
