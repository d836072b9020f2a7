package sourcecache

import "path/filepath"

// The files of a source credentials directory (Config.CredentialsDir): the
// keys of one Secret, as a volume mounts them.
const (
	// CredentialsDockerConfig is a docker config.json (the key of a
	// kubernetes.io/dockerconfigjson Secret): registry credentials.
	CredentialsDockerConfig = ".dockerconfigjson"
	// CredentialsGit is a git-credential-store file: https credentials for
	// git sources.
	CredentialsGit = "git-credentials"
)

// Config is how a Filler reaches the sources: the cache directory and the
// credential files of the process's flags (--source-cache,
// --registry-config, --git-credentials, --source-credentials). It names
// files only, so that it can be handed to a helper process as it is.
type Config struct {
	CacheDir       string `json:"cacheDir"`
	RegistryConfig string `json:"registryConfig,omitempty"`
	GitCredentials string `json:"gitCredentials,omitempty"`
	CredentialsDir string `json:"credentialsDir,omitempty"`
}

// CredentialFiles are the files a credentials reason (ReasonCredentials)
// may name under c.
func (c Config) CredentialFiles() []string {
	if c.CredentialsDir == "" {
		return nil
	}
	return []string{filepath.Join(c.CredentialsDir, CredentialsDockerConfig), filepath.Join(c.CredentialsDir, CredentialsGit)}
}
