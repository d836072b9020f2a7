package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-containerregistry/pkg/authn"
)

// The files of a source credentials directory (Options.CredentialsDir): the
// keys of one Secret, as a volume mounts them.
const (
	// CredentialsDockerConfig is a docker config.json (the key of a
	// kubernetes.io/dockerconfigjson Secret): registry credentials.
	CredentialsDockerConfig = ".dockerconfigjson"
	// CredentialsGit is a git-credential-store file: https credentials for
	// git sources.
	CredentialsGit = "git-credentials"
)

// errCredentials is a credentials directory whose files cannot be read. Its
// message names the file, never its content.
type errCredentials struct{ file string }

func (e errCredentials) Error() string {
	return fmt.Sprintf("the source credentials %s cannot be read (see hostd's log)", e.file)
}

// credentials are the registry keychain and git credentials of one fetch:
// those of the options, and before them those of the credentials directory
// as it is now, so a Secret created or changed after start-up applies to
// the next fetch.
func (f *Fetcher) credentials() (authn.Keychain, *GitCredentials, error) {
	if f.opts.CredentialsDir == "" {
		return f.opts.Keychain, f.opts.GitAuth, nil
	}
	docker := filepath.Join(f.opts.CredentialsDir, CredentialsDockerConfig)
	kc, err := LoadDockerConfig(existing(docker))
	if err != nil {
		return nil, nil, errors.Join(errCredentials{file: docker}, err)
	}
	gitFile := filepath.Join(f.opts.CredentialsDir, CredentialsGit)
	git, err := LoadGitCredentials(existing(gitFile))
	if err != nil {
		return nil, nil, errors.Join(errCredentials{file: gitFile}, err)
	}
	if f.opts.GitAuth != nil {
		for host, a := range f.opts.GitAuth.byHost {
			if _, ok := git.byHost[host]; !ok {
				git.byHost[host] = a
			}
		}
	}
	return authn.NewMultiKeychain(kc, f.opts.Keychain), git, nil
}

// existing is path if a file is there, else "" (no credentials): the
// directory is an optional Secret volume, empty until the Secret exists.
func existing(path string) string {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return path
}

// auth is the https credentials for a git host, if any.
func (g *GitCredentials) auth(host string) (*http.BasicAuth, bool) {
	if g == nil {
		return nil, false
	}
	a, ok := g.byHost[host]
	return a, ok
}
