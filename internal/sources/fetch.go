package sources

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// Options configure a Fetcher.
type Options struct {
	// CacheDir holds verified manifests, layers and git trees by digest.
	CacheDir string
	// Keychain authenticates to registries; nil means anonymous.
	Keychain authn.Keychain
	// GitAuth authenticates git over https; nil means anonymous.
	GitAuth *GitCredentials
	// Transport carries registry requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// AllowLocalGit accepts file:// and plain-path git URLs, which the Skill
	// API refuses; for tests and local development only.
	AllowLocalGit bool
}

// Fetcher fetches skill sources. Each source is fetched from the network at
// most once: afterwards it is read from the cache and verified again by hash,
// so a tampered cache is refetched, never used.
//
// Fetches of different sources run concurrently and share no lock, so a
// source that never answers holds up only its own fetch (the caller's
// context bounds it). Two fetches of one source are safe too: each verifies
// what it read and the cache is written by rename, never in place.
type Fetcher struct {
	opts Options
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	if opts.Keychain == nil {
		opts.Keychain = authn.NewMultiKeychain() // anonymous
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	return &Fetcher{opts: opts}
}

// Fetch returns the verified skill tree of a source.
// A failure is a *FetchError, whose Reason is safe to show anywhere.
func (f *Fetcher) Fetch(ctx context.Context, src contract.SkillSource) (skillpack.Tree, error) {
	tree, err := f.fetch(ctx, src)
	if err != nil {
		return nil, &FetchError{Source: src.String(), Reason: reasonOf(err), Err: err}
	}
	return tree, nil
}

func (f *Fetcher) fetch(ctx context.Context, src contract.SkillSource) (skillpack.Tree, error) {
	var (
		tree skillpack.Tree
		err  error
	)
	switch {
	case src.OCI != nil && src.Git == nil:
		tree, err = f.fetchOCI(ctx, src.OCI.Reference)
	case src.Git != nil && src.OCI == nil:
		tree, err = f.fetchGit(ctx, *src.Git)
	default:
		err = errors.New("exactly one of oci or git must be set")
	}
	if err != nil {
		return nil, err
	}
	if _, ok := tree.File("SKILL.md"); !ok {
		return nil, errNoSkillFile
	}
	return tree, nil
}

// fetchOCI pulls a skill artifact by digest. The manifest must hash to the
// reference's digest and the layer to the manifest's layer digest; both are
// checked here, whatever the registry client already checked.
func (f *Fetcher) fetchOCI(ctx context.Context, reference string) (skillpack.Tree, error) {
	ref, err := name.NewDigest(reference, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("reference must be pinned by digest: %w", err)
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(f.opts.Keychain), remote.WithTransport(f.opts.Transport)}
	manifest, err := f.cached(ref.DigestStr(), -1, func() (io.ReadCloser, error) {
		desc, err := remote.Get(ref, opts...)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(desc.Manifest)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	layer, err := skillpack.LayerOf(manifest)
	if err != nil {
		return nil, err
	}
	data, err := f.cached(layer.Digest.String(), layer.Size, func() (io.ReadCloser, error) {
		l, err := remote.Layer(ref.Context().Digest(layer.Digest.String()), opts...)
		if err != nil {
			return nil, err
		}
		return l.Compressed()
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return skillpack.Untar(bytes.NewReader(data))
}

// maxBlob bounds any blob read: a skill layer is at most the tree limit plus
// tar headers; a manifest is small.
const maxBlob = skillpack.MaxTreeBytes + skillpack.MaxFiles*1024 + 1<<20

// cached returns the blob with that digest ("sha256:<hex>") from the cache if
// the cached bytes still hash to it, else from fetch, verified and then
// stored. size is the expected length, or -1 when unknown.
func (f *Fetcher) cached(digest string, size int64, fetch func() (io.ReadCloser, error)) ([]byte, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 {
		return nil, fmt.Errorf("digest %q is not sha256", digest)
	}
	path := filepath.Join(f.opts.CacheDir, "blobs", "sha256", hexDigest)
	if b, err := os.ReadFile(path); err == nil && sha256Hex(b) == hexDigest {
		return b, nil
	}
	rc, err := fetch()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxBlob+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBlob {
		return nil, fmt.Errorf("blob %s is over %d bytes", digest, maxBlob)
	}
	if got := sha256Hex(b); got != hexDigest {
		return nil, fmt.Errorf("%w: content hashes to sha256:%s, not %s", errVerification, got, digest)
	}
	if size >= 0 && int64(len(b)) != size {
		return nil, fmt.Errorf("%w: %d bytes, the manifest says %d", errVerification, len(b), size)
	}
	if err := writeAtomic(path, b); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return b, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeAtomic writes a cache file through a temporary file and a rename, so a
// crash never leaves a half-written blob under its digest.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func sortTree(t skillpack.Tree) {
	slices.SortFunc(t, func(a, b skillpack.File) int { return cmp.Compare(a.Path, b.Path) })
}
