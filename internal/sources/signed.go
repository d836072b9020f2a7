package sources

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// fillSignatures caches the Sigstore bundles the registry's referrers hold
// for the artifact pinned by ref, unverified: the Fetcher's read verifies
// them against the trust of the moment, every time, so a bundle cached
// under another trust is never accepted for having been cached.
func (f *Fetcher) fillSignatures(ctx context.Context, ref name.Digest, opts []remote.Option) error {
	bundles, err := ociskill.Referrers(ctx, ref, sigcheck.BundleMediaType, opts...)
	if err != nil {
		return err
	}
	path := filepath.Join(f.opts.CacheDir, "signatures", strings.TrimPrefix(ref.DigestStr(), "sha256:")+".json")
	return sourcecache.WriteAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(bundles) })
}
