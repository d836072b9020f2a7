package agentcmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/sources"
)

// SourceFlags configure how external skill sources are fetched, the same way
// for `loadout materialize` and `loadout hostd`.
type SourceFlags struct {
	cache          string
	registryConfig string
	gitCredentials string
	credentialsDir string
	skillSigners   string
}

// Add registers the flags on cmd.
func (f *SourceFlags) Add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cache, "source-cache", filepath.Join(os.TempDir(), "loadout-sources"), "directory caching fetched external skills by digest (an emptyDir in a pod)")
	cmd.Flags().StringVar(&f.registryConfig, "registry-config", "", "docker config.json with registry credentials (a mounted kubernetes.io/dockerconfigjson Secret); empty means anonymous")
	cmd.Flags().StringVar(&f.gitCredentials, "git-credentials", "", "git-credential-store file (https://USER:TOKEN@HOST lines) for private git sources")
	cmd.Flags().StringVar(&f.skillSigners, "skill-signers", "", "PEM file of public keys trusted to sign skills, required on top of what each context requires (an Extension's skillSigners): when set, an OCI skill must carry a Sigstore bundle by one of them (loadout push --sign-key), verified offline, and git skills are refused")
	cmd.Flags().StringVar(&f.credentialsDir, "source-credentials", "", "directory read at each fetch, before --registry-config and --git-credentials: a mounted Secret with .dockerconfigjson and/or git-credentials keys (the agent-pod policy mounts the optional Secret loadout-source-credentials of the pod's namespace here); missing files mean none")
}

// Fetcher builds the fetcher the flags describe.
func (f *SourceFlags) Fetcher() (*sources.Fetcher, error) {
	kc, err := sources.LoadDockerConfig(f.registryConfig)
	if err != nil {
		return nil, err
	}
	git, err := sources.LoadGitCredentials(f.gitCredentials)
	if err != nil {
		return nil, err
	}
	opts := sources.Options{CacheDir: f.cache, Keychain: kc, GitAuth: git, CredentialsDir: f.credentialsDir}
	if f.skillSigners != "" {
		pems, err := os.ReadFile(f.skillSigners)
		if err != nil {
			return nil, err
		}
		keys, err := sigcheck.ParseKeys(pems)
		if err != nil {
			return nil, fmt.Errorf("--skill-signers %s: %w", f.skillSigners, err)
		}
		opts.Signers = keys
	}
	return sources.New(opts), nil
}

// MaterializeOptions are the tree options of `loadout materialize` and
// `loadout hostd --materialize`, so both write the same tree.
func MaterializeOptions(claudeCode, codex, managedEtc bool, hostdURL string) materialize.Options {
	return materialize.Options{ClaudeCode: claudeCode, Codex: codex, ManagedEtc: managedEtc, HostdURL: hostdURL}
}
