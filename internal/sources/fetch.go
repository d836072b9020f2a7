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
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
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

// Fetcher fetches skill sources. Each source is fetched from the network at
// most once: afterwards it is read from the cache and verified again by hash,
// so a tampered cache is refetched, never used.
//
// A fetched tree holds only SKILL.md in memory; every other file stays in
// the cache (skillpack.UntarStored) and is streamed from there, checked
// against the size and SHA-256 taken when its layer was verified, so memory
// does not grow with the skill and a cache changed later fails the read
// instead of serving the change. The cache directory must therefore outlive
// the trees fetched into it.
//
// Fetches of different sources run concurrently and share no lock, so a
// source that never answers holds up only its own fetch (the caller's
// context bounds it). Two fetches of one source are safe too: each verifies
// what it read and the cache is written by rename, never in place.
type Fetcher struct {
	opts Options
	// gitFetchBytes bounds what one git fetch may write to its clone store.
	gitFetchBytes int64
	// refuse, when set, refuses every source (Requiring).
	refuse error
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	if opts.Keychain == nil {
		opts.Keychain = authn.NewMultiKeychain() // anonymous
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	return &Fetcher{opts: opts, gitFetchBytes: gitMaxFetchBytes}
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
	case f.refuse != nil:
		err = f.refuse
	case src.OCI != nil && src.Git == nil:
		tree, err = f.fetchOCI(ctx, src.OCI.Reference)
	case src.Git != nil && src.OCI == nil && f.opts.Signers != nil:
		err = errGitUnsigned
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
	keychain, err := f.registryKeychain()
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain),
		remote.WithTransport(boundManifests{next: f.opts.Transport})}
	manifest, err := f.cached(ref.DigestStr(), -1, MaxManifestBytes, func() (io.ReadCloser, error) {
		desc, err := remote.Get(ref, opts...)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(desc.Manifest)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m, err := v1.ParseManifest(bytes.NewReader(manifest)); err == nil && m.Config.Size > MaxManifestBytes {
		// Never fetched, but a manifest naming one is not a skill's.
		return nil, errManifestTooLarge{what: "config blob", size: m.Config.Size}
	}
	layer, err := skillpack.LayerOf(manifest)
	if err != nil {
		return nil, err
	}
	if err := f.verifySigned(ctx, ref, opts); err != nil {
		return nil, err
	}
	blob, path, err := f.cachedFile(layer.Digest.String(), layer.Size, func() (io.ReadCloser, error) {
		l, err := remote.Layer(ref.Context().Digest(layer.Digest.String()), opts...)
		if err != nil {
			return nil, err
		}
		return l.Compressed()
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	defer blob.Close()
	return skillpack.UntarStored(blob, path)
}

// maxBlob bounds any blob read: a skill layer is at most the tree limit plus
// tar headers; a manifest is small.
const maxBlob = skillpack.MaxTreeBytes + skillpack.MaxFiles*1024 + 1<<20

// cached returns the blob with that digest ("sha256:<hex>") from the cache if
// the cached bytes still hash to it, else from fetch, verified and then
// stored. size is the expected length, or -1 when unknown; a blob over
// maxBytes is refused. It holds the blob in memory: for manifests; layers
// go through cachedFile.
func (f *Fetcher) cached(digest string, size, maxBytes int64, fetch func() (io.ReadCloser, error)) ([]byte, error) {
	blob, _, err := f.cachedFile(digest, size, fetch)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	if fi, err := blob.Stat(); err == nil && fi.Size() > maxBytes {
		return nil, errManifestTooLarge{what: "manifest", size: fi.Size()}
	}
	return io.ReadAll(io.LimitReader(blob, maxBytes))
}

// cachedFile is cached without holding the blob in memory: the blob is
// streamed from the cache, or from fetch into a temporary file of the cache,
// and hashed while it streams; only a blob that hashes to its digest (and
// has the expected size) is renamed under it. It returns the verified blob
// open at its start, which the caller closes, and its path in the cache.
func (f *Fetcher) cachedFile(digest string, size int64, fetch func() (io.ReadCloser, error)) (*os.File, string, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 {
		return nil, "", fmt.Errorf("digest %q is not sha256", digest)
	}
	dir := filepath.Join(f.opts.CacheDir, "blobs", "sha256")
	path := filepath.Join(dir, hexDigest)
	if blob, err := openVerified(path, hexDigest); err == nil {
		return blob, path, nil
	}
	blob, err := fetchInto(dir, path, hexDigest, size, fetch)
	return blob, path, err
}

// fetchInto streams fetch into a temporary file of dir, hashing it on the
// way, and renames it to path only when it verifies.
func fetchInto(dir, path, hexDigest string, size int64, fetch func() (io.ReadCloser, error)) (*os.File, error) {
	digest := "sha256:" + hexDigest
	rc, err := fetch()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(rc, maxBlob+1))
	if err != nil {
		return nil, err
	}
	if n > maxBlob {
		return nil, fmt.Errorf("blob %s is over %d bytes", digest, maxBlob)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hexDigest {
		return nil, fmt.Errorf("%w: content hashes to sha256:%s, not %s", errVerification, got, digest)
	}
	if size >= 0 && n != size {
		return nil, fmt.Errorf("%w: %d bytes, the manifest says %d", errVerification, n, size)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	// tmp is the verified blob under its new name: rewind it for the caller
	// rather than reopening path, which could be swapped after the check.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	kept = true
	return tmp, nil
}

// openVerified opens a cached blob if its content, streamed, hashes to
// hexDigest; the file is returned rewound to its start.
func openVerified(path, hexDigest string) (*os.File, error) {
	blob, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, blob); err == nil && hex.EncodeToString(h.Sum(nil)) == hexDigest {
		if _, err := blob.Seek(0, io.SeekStart); err == nil {
			return blob, nil
		}
	}
	_ = blob.Close()
	return nil, fmt.Errorf("cached blob %s does not verify", hexDigest)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeAtomic writes a cache file, streamed by write, through a temporary
// file and a rename, so a crash never leaves a half-written file under its
// name.
func writeAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func sortTree(t skillpack.Tree) {
	slices.SortFunc(t, func(a, b skillpack.File) int { return cmp.Compare(a.Path, b.Path) })
}
