package controllers

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testenv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// TestPublish_OlderWorkspaceTakesItsNameOverFromAYoungerOne: "late" is the
// older Workspace, but "early" (younger, output late-context) published
// first because the cache had not seen "late" yet. The older one keeps the
// name: its publish takes the ConfigMap over, and the context it then holds
// is signed for "late". The younger finds the older claimant and stands down.
func TestPublish_OlderWorkspaceTakesItsNameOverFromAYoungerOne(t *testing.T) {
	ctx := context.Background()
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	late := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "late", UID: "late-uid", CreationTimestamp: t0}}
	early := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "early", UID: "early-uid", CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))},
		Spec: v1alpha1.WorkspaceSpec{Output: &v1alpha1.WorkspaceOutput{ConfigMapName: "late-context"}}}
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "late-context",
		Labels:          map[string]string{vocab.WorkspaceLabel: "early"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(early, v1alpha1.GroupVersion.WithKind(v1alpha1.WorkspaceKind))}},
		Data: map[string]string{contract.KeySystemPrompt: "EARLY"}}
	c := fake.NewClientBuilder().WithScheme(fakeScheme()).WithObjects(late, early, held).
		WithIndex(&v1alpha1.Workspace{}, IndexOutputConfigMap, func(o client.Object) []string { return []string{o.(*v1alpha1.Workspace).ConfigMapName()} }).
		Build()
	key := testenv.SigningKey(t)
	signer, _ := contextsig.NewSigner([]ed25519.PrivateKey{key})
	anchor, _ := contextsig.ParseTrustAnchor(signer.TrustAnchor())
	r := &WorkspaceReconciler{Client: c, APIReader: c, Signer: signer}

	if owner, err := r.olderClaimant(ctx, early); err != nil || owner == nil || owner.Name != "late" {
		t.Fatalf("the younger Workspace's older claimant = %v, %v; want late", owner, err)
	}
	if owner, err := r.olderClaimant(ctx, late); err != nil || owner != nil {
		t.Fatalf("the older Workspace's older claimant = %v, %v; want none", owner, err)
	}
	data := map[string]string{contract.KeySystemPrompt: "LATE"}
	res := &resources.Result{Hash: resources.ContextHash(data), Data: data}
	if _, err := r.publish(ctx, late, res); err != nil {
		t.Fatalf("the older Workspace's publish: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), got); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(got, late) || len(got.OwnerReferences) != 1 || got.Data[contract.KeySystemPrompt] != "LATE" {
		t.Fatalf("after the takeover: owners %+v, data %v", got.OwnerReferences, got.Data)
	}
	if err := anchor.Verify([]byte(got.Data[contract.KeySignature]), res.Hash, contextsig.Subject{Namespace: "team", Name: "late"}); err != nil {
		t.Errorf("the taken-over context is not signed for late: %v", err)
	}
	if got.Annotations[vocab.ContextSignersAnnotation] != signer.KeyIDs()[0] {
		t.Errorf("signers annotation %q, want %q", got.Annotations[vocab.ContextSignersAnnotation], signer.KeyIDs()[0])
	}

	// Steady state: the same context and key set write nothing.
	if _, err := r.publish(ctx, late, res); err != nil {
		t.Fatal(err)
	}
	again := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != got.ResourceVersion {
		t.Errorf("an unchanged context was written again: resourceVersion %s → %s", got.ResourceVersion, again.ResourceVersion)
	}
	// A rotation adds a key: the same context is signed again by both keys,
	// so anchors with either key verify it.
	added := testenv.SigningKey(t)
	r.Signer, _ = contextsig.NewSigner([]ed25519.PrivateKey{key, added})
	if _, err := r.publish(ctx, late, res); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), again); err != nil {
		t.Fatal(err)
	}
	newOnly, _ := contextsig.NewSigner([]ed25519.PrivateKey{added})
	newAnchor, _ := contextsig.ParseTrustAnchor(newOnly.TrustAnchor())
	for name, v := range map[string]*contextsig.Verifier{"old anchor": anchor, "new anchor": newAnchor} {
		if err := v.Verify([]byte(again.Data[contract.KeySignature]), res.Hash, contextsig.Subject{Namespace: "team", Name: "late"}); err != nil {
			t.Errorf("after adding a key, %s: %v", name, err)
		}
	}
}

// A platform extension whose namespace selector does not parse is reported
// invalid, naming the field and saying that it applies everywhere meanwhile.
func TestCheckExtension_BrokenNamespaceSelectorIsNamed(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "loadout-system", Labels: map[string]string{vocab.TrustLabel: "trusted"}}}
	c := fake.NewClientBuilder().WithScheme(fakeScheme()).WithObjects(ns).Build()
	e := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "loadout-system", Name: "guard"},
		Spec: v1alpha1.ExtensionSpec{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Resembles"}}}}}
	got, err := checkExtension(context.Background(), c, workspace.Policy{PlatformNamespaces: []string{"loadout-system"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.errs) != 1 || !strings.Contains(got.errs[0].Error(), "spec.namespaceSelector") || !strings.Contains(got.errs[0].Error(), "every namespace") {
		t.Fatalf("errors %v, want one naming spec.namespaceSelector", got.errs)
	}
}

// Within one second (the resolution of creation timestamps) the Workspace
// whose default name it is counts as the older: a squatter created in the
// same second as the Workspace it copies gains nothing.
func TestCreated_WithinOneSecondTheDefaultNameWins(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	owner := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "zz", CreationTimestamp: t0}}
	squat := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "aa", CreationTimestamp: t0},
		Spec: v1alpha1.WorkspaceSpec{Output: &v1alpha1.WorkspaceOutput{ConfigMapName: "zz-context"}}}
	if !created(owner, squat) || created(squat, owner) {
		t.Error("the Workspace whose default name it is must count as the older within one second")
	}
	later := squat.DeepCopy()
	later.CreationTimestamp = metav1.NewTime(t0.Add(-time.Second))
	if !created(later, owner) {
		t.Error("an earlier creation time must win")
	}
}
