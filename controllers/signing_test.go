package controllers

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The manager's first start creates its key set; later starts (and other
// replicas) load the same keys, and publish their public keys for the
// admission policies. A Secret entry that is not a key stops the manager
// with an error naming it, rather than signing with fewer keys than the
// operator installed.
func TestLoadSigningKeys_CreatesOnceThenLoadsAndPublishesTheAnchor(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(fakeScheme()).Build()
	key := types.NamespacedName{Namespace: "loadout-system", Name: DefaultSigningSecret}
	first, err := LoadSigningKeys(ctx, c, key)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadSigningKeys(ctx, c, key)
	if err != nil {
		t.Fatal(err)
	}
	if first.TrustAnchor() != again.TrustAnchor() || len(first.KeyIDs()) != 1 {
		t.Fatalf("a second start has other keys: %v vs %v", first.KeyIDs(), again.KeyIDs())
	}
	cmKey := types.NamespacedName{Namespace: "loadout-system", Name: DefaultHostdConfigMap}
	if err := PublishHostdConfig(ctx, c, cmKey, "example.com/loadout:v1", again); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, cmKey, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[HostdConfigContextKeys] != first.TrustAnchor() || cm.Data[HostdConfigImageKey] != "example.com/loadout:v1" {
		t.Errorf("hostd configuration %v", cm.Data)
	}

	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["key-typo.pem"] = []byte("not a key")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSigningKeys(ctx, c, key); err == nil || !strings.Contains(err.Error(), "data[key-typo.pem]") {
		t.Fatalf("a bad entry: err = %v, want one naming data[key-typo.pem]", err)
	}
}
