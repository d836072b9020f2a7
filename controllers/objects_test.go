package controllers

import (
	"context"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestNamespaceLabels_NotYetCachedIsReadLive: a namespace whose watch event
// trails the Workspace's must not get the default trust level; its label is
// read live. Only a namespace that exists nowhere has no labels.
func TestNamespaceLabels_NotYetCachedIsReadLive(t *testing.T) {
	untrusted := namespaceMetadata()
	untrusted.Name = "tenant"
	untrusted.Labels = map[string]string{vocab.TrustLabel: string(vocab.TrustUntrusted)}
	emptyCache := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	live := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(untrusted).Build()
	objs := cachedObjects{cache: emptyCache, reader: live}

	labels, err := objs.NamespaceLabels(context.Background(), "tenant")
	if err != nil || labels[vocab.TrustLabel] != string(vocab.TrustUntrusted) {
		t.Errorf("labels %v, err %v; want the live untrusted label", labels, err)
	}
	labels, err = objs.NamespaceLabels(context.Background(), "nowhere")
	if err != nil || labels != nil {
		t.Errorf("missing namespace: labels %v, err %v; want none and no error", labels, err)
	}
}
