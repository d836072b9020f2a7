package controllers

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/internal/contextsig"
)

// Defaults of the signing key set and of the hostd configuration the
// admission policies inject into agent pods (config/policy), both in the
// manager's namespace.
const (
	DefaultSigningSecret   = "loadout-context-signing"
	DefaultHostdConfigMap  = "loadout-hostd"
	HostdConfigImageKey    = "image"
	HostdConfigContextKeys = "contextKeys"
	// Where hostd reaches the MCP headers endpoint (internal/mcpheaders/endpoint)
	// and the CA it trusts there; present only while the endpoint is on.
	HostdConfigMCPHeadersURL = "mcpHeadersURL"
	HostdConfigMCPHeadersCA  = "mcpHeadersCA"
	// Where Claude Code in bound pods reaches the model: the platform's
	// gateway, which admission writes as ANTHROPIC_BASE_URL into every agent
	// container; present only when the platform has one.
	HostdConfigClaudeCodeBaseURL = "claudeCodeBaseURL"
	signingKeyEntryPrefix        = "key-"
	signingKeyEntrySuffix        = ".pem"
)

// The manager's own namespace: its key set Secret and the hostd
// configuration. Granted by the hand-written Role config/rbac/signing_role.yaml,
// not by markers: controller-gen would make them cluster-wide.

// LoadSigningKeys returns the signer over the key set in Secret key, creating
// the Secret with one new Ed25519 key when it does not exist (the manager's
// first start). Every entry of the Secret's data is one PKCS #8 PEM private
// key (what `openssl genpkey -algorithm ed25519` writes); an entry that does
// not parse is an error naming it, since signing with fewer keys than the
// operator installed could cut agents off.
//
// Rotation: add the new key to the Secret and restart the manager (contexts
// are then signed by both keys), roll the agent pods so their trust anchor
// holds the new key, then remove the old entry and restart again
// (docs/security.md).
func LoadSigningKeys(ctx context.Context, c client.Client, key types.NamespacedName) (*contextsig.Signer, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		secret, err = createSigningSecret(ctx, c, key)
		if apierrors.IsAlreadyExists(err) { // another replica was first
			secret = &corev1.Secret{}
			err = c.Get(ctx, key, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("context signing keys: Secret %s: %w", key, err)
	}
	names := make([]string, 0, len(secret.Data))
	for name := range secret.Data {
		names = append(names, name)
	}
	slices.Sort(names)
	keys := make([]ed25519.PrivateKey, 0, len(names))
	for _, name := range names {
		k, err := contextsig.ParsePrivateKey(secret.Data[name])
		if err != nil {
			return nil, fmt.Errorf("context signing keys: Secret %s: data[%s]: %w", key, name, err)
		}
		keys = append(keys, k)
	}
	s, err := contextsig.NewSigner(keys)
	if err != nil {
		return nil, fmt.Errorf("context signing keys: Secret %s: %w", key, err)
	}
	return s, nil
}

func createSigningSecret(ctx context.Context, c client.Client, key types.NamespacedName) (*corev1.Secret, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	pemKey, err := contextsig.MarshalPrivateKey(k)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "loadout"}},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			signingKeyEntryPrefix + contextsig.KeyID(k.Public().(ed25519.PublicKey)) + signingKeyEntrySuffix: pemKey,
		},
	}
	return secret, c.Create(ctx, secret, client.FieldOwner(FieldOwner))
}

// PublishHostdConfig applies the ConfigMap the agent-pod admission policies
// take as their parameter: the hostd image and the trust anchor (the public
// keys of s). Nothing a tenant can write reaches it: it lives in the
// manager's namespace.
func PublishHostdConfig(ctx context.Context, c client.Client, key types.NamespacedName, image string, s *contextsig.Signer) error {
	return PublishHostdConfigWith(ctx, c, key, HostdConfig{Image: image, Signer: s})
}

// HostdConfig is what the agent-pod admission policies inject into hostd.
type HostdConfig struct {
	Image  string
	Signer *contextsig.Signer
	// MCPHeadersURL and MCPHeadersCA are the manager's MCP headers endpoint
	// and its certificate (PEM); empty when the endpoint is off.
	MCPHeadersURL string
	MCPHeadersCA  []byte
	// ClaudeCodeBaseURL is the platform's model gateway for Claude Code
	// (CheckClaudeCodeBaseURL); empty when the platform has none.
	ClaudeCodeBaseURL string
}

// anthropicAPIHost is the host Claude Code counts as the first-party API:
// a session whose ANTHROPIC_BASE_URL names it (or is unset) fetches its
// organisation's server-managed settings, which displace the managed file
// (docs/security.md).
const anthropicAPIHost = "api.anthropic.com"

// CheckClaudeCodeBaseURL accepts the platform's model gateway for Claude
// Code in bound pods: an absolute http or https URL with a host, no user
// information, and not Anthropic's own API host, since only another host
// keeps a session from fetching its organisation's server-managed
// settings.
func CheckClaudeCodeBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("claude code base URL %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("claude code base URL %q: the scheme must be http or https", raw)
	case u.Hostname() == "":
		return fmt.Errorf("claude code base URL %q: no host", raw)
	case u.User != nil:
		return fmt.Errorf("claude code base URL %q: user information would be visible in every agent container's environment", raw)
	case strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), anthropicAPIHost):
		return fmt.Errorf("claude code base URL %q: %s is the first-party API, whose sessions take their organisation's server-managed settings over the managed file; name the platform's gateway", raw, anthropicAPIHost)
	}
	return nil
}

// PublishHostdConfigWith is PublishHostdConfig with every field.
func PublishHostdConfigWith(ctx context.Context, c client.Client, key types.NamespacedName, hc HostdConfig) error {
	data := map[string]string{HostdConfigImageKey: hc.Image, HostdConfigContextKeys: hc.Signer.TrustAnchor()}
	if hc.MCPHeadersURL != "" {
		data[HostdConfigMCPHeadersURL] = hc.MCPHeadersURL
		data[HostdConfigMCPHeadersCA] = string(hc.MCPHeadersCA)
	}
	if hc.ClaudeCodeBaseURL != "" {
		if err := CheckClaudeCodeBaseURL(hc.ClaudeCodeBaseURL); err != nil {
			return err
		}
		data[HostdConfigClaudeCodeBaseURL] = hc.ClaudeCodeBaseURL
	}
	cm := corev1ac.ConfigMap(key.Name, key.Namespace).
		WithLabels(map[string]string{"app.kubernetes.io/name": "loadout", "app.kubernetes.io/component": "hostd"}).
		WithData(data)
	if err := c.Apply(ctx, cm, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("publishing the hostd configuration ConfigMap %s: %w", key, err)
	}
	return nil
}
