package sources

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/caroots"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// Options configure a Fetcher.
type Options struct {
	// CacheDir holds verified manifests, layers and git trees by digest.
	CacheDir string
	// Keychain authenticates to registries; nil means anonymous.
	Keychain authn.Keychain
	// GitAuth authenticates git over https; nil means anonymous.
	GitAuth *GitCredentials
	// CredentialsDir, when set, is a directory (an optional Secret volume)
	// read at each fetch: CredentialsDockerConfig for registries and
	// CredentialsGit for git, tried before Keychain and GitAuth. A missing
	// file means none.
	CredentialsDir string
	// Transport carries registry requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// AllowLocalGit accepts file:// and plain-path git URLs, which the Skill
	// API refuses; for tests and local development only.
	AllowLocalGit bool
	// Signers, when set, accepts only OCI skills that carry a Sigstore
	// bundle it accepts (signed.go); git skills are refused. A process's
	// --skill-signers sets it; a context's requirements add to it
	// (Requiring).
	Signers sigcheck.Verifier
}

// Fetcher fetches skill sources in process: the sourcecache.Fetcher it
// embeds reads and verifies the cache, and Fill, its Filler, brings sources
// from registries (go-containerregistry) and git hosts (go-git) into it.
// The sidecar links none of this: it runs cmd/loadout-fetch, which calls
// Fill, and verifies what that wrote itself (internal/fetchhelper).
type Fetcher struct {
	*sourcecache.Fetcher
	opts Options
	// gitFetchBytes bounds what one git fetch may write to its clone store.
	gitFetchBytes int64
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	if opts.Keychain == nil {
		opts.Keychain = authn.NewMultiKeychain() // anonymous
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	f := &Fetcher{opts: opts, gitFetchBytes: gitMaxFetchBytes}
	f.Fetcher = sourcecache.New(opts.CacheDir, f, opts.Signers)
	return f
}

// Load returns the Fetcher of a Config: its credential files read as
// LoadDockerConfig and LoadGitCredentials read them.
func Load(c sourcecache.Config) (*Fetcher, error) {
	kc, err := LoadDockerConfig(c.RegistryConfig)
	if err != nil {
		return nil, err
	}
	git, err := LoadGitCredentials(c.GitCredentials)
	if err != nil {
		return nil, err
	}
	return New(Options{CacheDir: c.CacheDir, Keychain: kc, GitAuth: git, CredentialsDir: c.CredentialsDir}), nil
}

// LoadFiller is Load as a sourcecache.Filler: what `loadout hostd`,
// `loadout materialize` (agentcmd.SourceFiller) and the sidecar's helper
// (cmd/loadout-fetch) fill the cache with.
func LoadFiller(c sourcecache.Config) (sourcecache.Filler, error) {
	f, err := Load(c)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Fill implements sourcecache.Filler: it brings one source into the cache.
// What is already cached and verifies is not fetched again.
func (f *Fetcher) Fill(ctx context.Context, req sourcecache.FillRequest) error {
	// Registries and git hosts are reached over https by clients of their
	// own (go-containerregistry, go-git): the CA roots go in first.
	caroots.Ensure()
	src := req.Source
	switch {
	case src.OCI != nil && src.Git == nil:
		return f.fillOCI(ctx, src.OCI.Reference, req.Signatures, !req.ManifestOnly)
	case src.Git != nil && src.OCI == nil:
		return f.fillGit(ctx, *src.Git)
	}
	return errors.New("exactly one of oci or git must be set")
}

// Reason implements sourcecache.Filler.
func (f *Fetcher) Reason(err error) string { return reasonOf(err) }

// fillOCI pulls a skill artifact by digest into the cache: its manifest,
// its signature bundles when asked, and its layer unless not. Each blob is
// checked against its digest as it streams (sourcecache.StoreBlob),
// whatever the registry client already checked.
func (f *Fetcher) fillOCI(ctx context.Context, reference string, signatures, layer bool) error {
	ref, err := name.NewDigest(reference, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("reference must be pinned by digest: %w", err)
	}
	keychain, err := f.registryKeychain()
	if err != nil {
		return err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain),
		remote.WithTransport(boundManifests{next: f.opts.Transport})}
	manifest, _, err := sourcecache.StoreBlob(f.opts.CacheDir, ref.DigestStr(), -1, func() (io.ReadCloser, error) {
		desc, err := remote.Get(ref, opts...)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(desc.Manifest)), nil
	})
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(manifest, sourcecache.MaxManifestBytes+1))
	_ = manifest.Close()
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if m, err := skillpack.ParseManifest(raw); err == nil && m.Config.Size > sourcecache.MaxManifestBytes {
		// Never fetched, but a manifest naming one is not a skill's.
		return sourcecache.ManifestTooLargeError{What: "config blob", Size: m.Config.Size}
	}
	desc, err := skillpack.LayerOf(raw)
	if err != nil {
		return err
	}
	if signatures {
		if err := f.fillSignatures(ctx, ref, opts); err != nil {
			return err
		}
	}
	if !layer {
		return nil
	}
	blob, _, err := sourcecache.StoreBlob(f.opts.CacheDir, desc.Digest, desc.Size, func() (io.ReadCloser, error) {
		l, err := remote.Layer(ref.Context().Digest(desc.Digest), opts...)
		if err != nil {
			return nil, err
		}
		return l.Compressed()
	})
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	return blob.Close()
}

func sortTree(t skillpack.Tree) {
	slices.SortFunc(t, func(a, b skillpack.File) int { return cmp.Compare(a.Path, b.Path) })
}
