package sources

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// DockerConfigKeychain holds the registry credentials of one docker
// config.json: the `.dockerconfigjson` key of a kubernetes.io/dockerconfigjson
// Secret that the agent pod mounts (docs/concepts.md). It is the only place
// credentials come from: no $HOME, no helpers, nothing a Skill names, so a
// tenant's agent can only use what its own pod was given.
type DockerConfigKeychain struct {
	auths map[string]authn.AuthConfig
}

// LoadDockerConfig reads a docker config.json; an empty path means no
// credentials (anonymous pulls).
func LoadDockerConfig(path string) (*DockerConfigKeychain, error) {
	k := &DockerConfigKeychain{auths: map[string]authn.AuthConfig{}}
	if path == "" {
		return k, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("registry config: %w", err)
	}
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("registry config %s: %w", path, err)
	}
	for key, a := range cfg.Auths {
		k.auths[registryHost(key)] = a
	}
	return k, nil
}

// registryHost normalises a config key ("https://index.docker.io/v1/",
// "ghcr.io", "127.0.0.1:5000") to the registry host name.
func registryHost(key string) string {
	if u, err := url.Parse(key); err == nil && u.Host != "" {
		key = u.Host
	}
	key = strings.TrimSuffix(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		return name.DefaultRegistry
	}
	return key
}

// Resolve implements authn.Keychain: credentials by registry host, else
// anonymous.
func (k *DockerConfigKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if a, ok := k.auths[registryHost(target.RegistryStr())]; ok {
		return authn.FromConfig(a), nil
	}
	return authn.Anonymous, nil
}
