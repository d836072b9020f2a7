package agentcmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/sourcecache"
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

// SourceFiller makes what brings external skill sources into the cache for
// a Config: in process (internal/sources) for the full CLI, which passes
// it from cmd/loadout; a helper process (internal/fetchhelper) for the
// sidecar, so that agentcmd, which the sidecar links, links neither.
type SourceFiller func(sourcecache.Config) (sourcecache.Filler, error)

// Config is the cache and the credential files of the flags.
func (f *SourceFlags) Config() sourcecache.Config {
	return sourcecache.Config{CacheDir: f.cache, RegistryConfig: f.registryConfig, GitCredentials: f.gitCredentials, CredentialsDir: f.credentialsDir}
}

// Fetcher builds the fetcher the flags describe, filling its cache with
// fill and verifying under --skill-signers.
func (f *SourceFlags) Fetcher(fill SourceFiller) (*sourcecache.Fetcher, error) {
	var signers sigcheck.Verifier
	if f.skillSigners != "" {
		pems, err := os.ReadFile(f.skillSigners)
		if err != nil {
			return nil, err
		}
		keys, err := sigcheck.ParseKeys(pems)
		if err != nil {
			return nil, fmt.Errorf("--skill-signers %s: %w", f.skillSigners, err)
		}
		signers = keys
	}
	filler, err := fill(f.Config())
	if err != nil {
		return nil, err
	}
	return sourcecache.New(f.cache, filler, signers), nil
}

// MaterializeOptions are the tree options of `loadout materialize` and
// `loadout hostd --materialize`, so both write the same tree.
func MaterializeOptions(claudeCode, codex, managedEtc bool, hostdURL string) materialize.Options {
	return materialize.Options{ClaudeCode: claudeCode, Codex: codex, ManagedEtc: managedEtc, HostdURL: hostdURL}
}
