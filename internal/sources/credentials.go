package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// The files of a source credentials directory (Options.CredentialsDir).
const (
	CredentialsDockerConfig = sourcecache.CredentialsDockerConfig
	CredentialsGit          = sourcecache.CredentialsGit
)

// errCredentials is a credentials directory whose files cannot be read. Its
// message names the file, never its content.
type errCredentials struct{ file string }

func (e errCredentials) Error() string {
	return fmt.Sprintf(sourcecache.ReasonCredentials, e.file)
}

// registryKeychain is the keychain of one registry fetch: the credentials
// directory's docker config as it is now (so a Secret created or changed
// after start-up applies to the next fetch), then the options'.
func (f *Fetcher) registryKeychain() (authn.Keychain, error) {
	if f.opts.CredentialsDir == "" {
		return f.opts.Keychain, nil
	}
	kc, err := loadCredentials(f.opts.CredentialsDir, CredentialsDockerConfig, LoadDockerConfig)
	if err != nil {
		return nil, err
	}
	return authn.NewMultiKeychain(kc, f.opts.Keychain), nil
}

// gitCredentials are the git credentials of one fetch: the credentials
// directory's as they are now, then the options' for other hosts.
func (f *Fetcher) gitCredentials() (*GitCredentials, error) {
	if f.opts.CredentialsDir == "" {
		return f.opts.GitAuth, nil
	}
	git, err := loadCredentials(f.opts.CredentialsDir, CredentialsGit, LoadGitCredentials)
	if err != nil {
		return nil, err
	}
	if f.opts.GitAuth != nil {
		for host, a := range f.opts.GitAuth.byHost {
			if _, ok := git.byHost[host]; !ok {
				git.byHost[host] = a
			}
		}
	}
	return git, nil
}

// loadCredentials loads the directory's file name with load, which takes ""
// for a file that is not there; an error names the file, never its content.
func loadCredentials[T any](dir, name string, load func(path string) (T, error)) (T, error) {
	file := filepath.Join(dir, name)
	v, err := load(existing(file))
	if err != nil {
		var zero T
		return zero, errors.Join(errCredentials{file: file}, err)
	}
	return v, nil
}

// existing is path if a file is there, else "" (no credentials): the
// directory is an optional Secret volume, empty until the Secret exists.
func existing(path string) string {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return path
}
