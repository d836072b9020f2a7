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

// The platform's model gateway for Claude Code reaches the admission
// policies' parameters as claudeCodeBaseURL, and only a gateway does:
// Anthropic's own host is refused before anything is written, since a
// session there takes its organisation's server-managed settings over the
// managed hooks (docs/security.md).
func TestPublishHostdConfig_ClaudeCodeBaseURLIsAGateway(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(fakeScheme()).Build()
	s, err := LoadSigningKeys(ctx, c, types.NamespacedName{Namespace: "loadout-system", Name: DefaultSigningSecret})
	if err != nil {
		t.Fatal(err)
	}
	cmKey := types.NamespacedName{Namespace: "loadout-system", Name: DefaultHostdConfigMap}
	err = PublishHostdConfigWith(ctx, c, cmKey, HostdConfig{Image: "example.com/loadout:v1", Signer: s, ClaudeCodeBaseURL: "https://api.anthropic.com"})
	if err == nil || !strings.Contains(err.Error(), "first-party API") {
		t.Fatalf("Anthropic's host as the gateway: %v", err)
	}
	if err := c.Get(ctx, cmKey, &corev1.ConfigMap{}); err == nil {
		t.Fatal("the refused configuration was written")
	}
	const gateway = "https://llm-gateway.platform.svc:8443"
	if err := PublishHostdConfigWith(ctx, c, cmKey, HostdConfig{Image: "example.com/loadout:v1", Signer: s, ClaudeCodeBaseURL: gateway}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, cmKey, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[HostdConfigClaudeCodeBaseURL] != gateway {
		t.Errorf("hostd configuration %v, want %s=%s", cm.Data, HostdConfigClaudeCodeBaseURL, gateway)
	}
}
