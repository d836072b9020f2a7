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

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// errGitUnsigned is a git source where signatures are required: a commit
// carries no Sigstore bundle.
var errGitUnsigned = errors.New("only signed OCI skills are accepted here (a git source carries no Sigstore signature)")

// errRequirements is a context whose signer requirements do not parse:
// its OCI skills are refused, never loaded unchecked.
type errRequirements struct{ err error }

// reasonRequirements is errRequirements' short reason (Reason).
const reasonRequirements = "the context's skill signer requirements cannot be read, so its external skills are refused"

func (e errRequirements) Error() string { return reasonRequirements + ": " + e.err.Error() }
func (e errRequirements) Unwrap() error { return e.err }

// Requiring is f for one context: it accepts only what meets the
// context's signer requirements (contract.Registry.SkillSigners) and f's
// own Options.Signers, both. Requirements that do not parse make a Fetcher
// that refuses every source of the context, saying why (fail closed).
// Requiring shares f's cache, which holds verified bytes only.
func (f *Fetcher) Requiring(reqs []contract.SignerRequirement) *Fetcher {
	v, err := sigcheck.Required(reqs)
	out := *f
	out.refuse = nil
	if err != nil {
		out.refuse = errRequirements{err}
		return &out
	}
	out.opts.Signers = sigcheck.Join(f.opts.Signers, v)
	return &out
}

// verifySigned checks, when Options.Signers is set, that the artifact
// pinned by ref (whose manifest is verified already) carries a Sigstore
// bundle by a trusted key. Bundles come from the registry's
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
