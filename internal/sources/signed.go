package sources

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// errGitUnsigned is a git source where signatures are required: a commit
// carries no Sigstore bundle.
var errGitUnsigned = errors.New("only signed OCI skills are accepted here (a git source carries no Sigstore signature)")

// verifySigned checks, when Options.Signers is set, that the artifact
// pinned by ref (whose manifest is verified already) carries a Sigstore
// bundle by a trusted key (issue 47). Bundles come from the registry's
// referrers once; those that verified are cached beside the blobs and
// verified again, offline, at every later fetch, so a changed cache or a
// changed trust is never served from the cache.
func (f *Fetcher) verifySigned(ctx context.Context, ref name.Digest, opts []remote.Option) error {
	if f.opts.Signers == nil {
		return nil
	}
	path := filepath.Join(f.opts.CacheDir, "signatures", strings.TrimPrefix(ref.DigestStr(), "sha256:")+".json")
	var cached [][]byte
	if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &cached) == nil && f.opts.Signers.Verify(ref.DigestStr(), cached) == nil {
		return nil
	}
	bundles, err := skillpack.Referrers(ctx, ref, sigcheck.BundleMediaType, opts...)
	if err != nil {
		return err
	}
	if err := f.opts.Signers.Verify(ref.DigestStr(), bundles); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(bundles) })
}
