package sourcecache

import (
	"context"
	"errors"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// FillRequest asks a Filler to put a source's bytes in the cache.
type FillRequest struct {
	Source contract.SkillSource `json:"source"`
	// Signatures asks for an OCI artifact's signature bundles (its
	// referrers) too; they are cached unverified, and checked at each read.
	Signatures bool `json:"signatures,omitempty"`
	// ManifestOnly leaves an OCI artifact's layer out: a signed skill's
	// layer is fetched only once its signature verified.
	ManifestOnly bool `json:"manifestOnly,omitempty"`
}

// A Filler fetches sources from the network into the cache directory. What
// it writes is checked by the Fetcher's reads, so it need not be trusted.
type Filler interface {
	Fill(ctx context.Context, req FillRequest) error
	// Reason is the short, remote-free reason of a Fill failure.
	Reason(err error) string
}

// Fetcher fetches skill sources through a Filler and serves them from the
// cache. Each source is fetched from the network at most once: afterwards
// it is read from the cache and verified again, so a tampered cache is
// refetched, never used.
//
// A fetched tree holds only SKILL.md in memory; every other file stays in
// the cache (skillpack.UntarStored) and is streamed from there, checked
// against the size and SHA-256 taken when it was verified, so memory does
// not grow with the skill and a cache changed later fails the read instead
// of serving the change. The cache directory must therefore outlive the
// trees fetched into it.
//
// Fetches of different sources share no lock, so a source that never
// answers holds up only its own fetch (the caller's context bounds it).
type Fetcher struct {
	dir     string
	filler  Filler
	signers sigcheck.Verifier
	// refuse, when set, refuses every source (Requiring).
	refuse error
}

// New returns a Fetcher over the cache directory dir. signers, when set,
// accepts only OCI skills that carry a Sigstore bundle it accepts; git
// skills are then refused.
func New(dir string, filler Filler, signers sigcheck.Verifier) *Fetcher {
	return &Fetcher{dir: dir, filler: filler, signers: signers}
}

// Requiring is f for one context: it accepts only what meets the
// context's signer requirements (contract.Registry.SkillSigners) and f's
// own signers, both. Requirements that do not parse make a Fetcher that
// refuses every source of the context, saying why (fail closed). Requiring
// shares f's cache and Filler.
func (f *Fetcher) Requiring(reqs []contract.SignerRequirement) *Fetcher {
	v, err := sigcheck.Required(reqs)
	out := *f
	out.refuse = nil
	if err != nil {
		out.refuse = errRequirements{err}
		return &out
	}
	out.signers = sigcheck.Join(f.signers, v)
	return &out
}

// Fetch returns the verified skill tree of a source.
// A failure is a *FetchError, whose Reason is safe to show anywhere.
func (f *Fetcher) Fetch(ctx context.Context, src contract.SkillSource) (skillpack.Tree, error) {
	tree, err := f.fetch(ctx, src)
	if err != nil {
		return nil, &FetchError{Source: src.String(), Reason: f.reason(err), Err: err}
	}
	return tree, nil
}

// fillError is a failure of the Filler, which classifies it.
type fillError struct{ err error }

func (e fillError) Error() string { return e.err.Error() }
func (e fillError) Unwrap() error { return e.err }

func (f *Fetcher) reason(err error) string {
	var fe fillError
	if errors.As(err, &fe) {
		return f.filler.Reason(fe.err)
	}
	if r, ok := ReasonOf(err); ok {
		return r
	}
	return ReasonFailed
}

func (f *Fetcher) fetch(ctx context.Context, src contract.SkillSource) (skillpack.Tree, error) {
	switch {
	case f.refuse != nil:
		return nil, f.refuse
	case (src.OCI == nil) == (src.Git == nil):
		return nil, errors.New("exactly one of oci or git must be set")
	case src.Git != nil && f.signers != nil:
		return nil, ErrGitUnsigned
	}
	if tree, err := f.read(src); err == nil {
		return tree, nil
	}
	fill := func(req FillRequest) error {
		if err := f.filler.Fill(ctx, req); err != nil {
			return fillError{err}
		}
		return nil
	}
	if src.OCI != nil && f.signers != nil {
		if err := fill(FillRequest{Source: src, Signatures: true, ManifestOnly: true}); err != nil {
			return nil, err
		}
		digest, _, err := ociManifest(f.dir, src.OCI.Reference)
		if err != nil {
			return nil, err
		}
		if err := checkSigned(f.dir, digest, f.signers); err != nil {
			return nil, err
		}
	}
	if err := fill(FillRequest{Source: src}); err != nil {
		return nil, err
	}
	return f.read(src)
}

// read reads a source from the cache, verified.
func (f *Fetcher) read(src contract.SkillSource) (skillpack.Tree, error) {
	var (
		tree skillpack.Tree
		err  error
	)
	if src.OCI != nil {
		tree, err = readOCI(f.dir, src.OCI.Reference, f.signers)
	} else {
		tree, err = readGit(f.dir, *src.Git)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := tree.File("SKILL.md"); !ok {
		return nil, errNoSkillFile
	}
	return tree, nil
}

// Dir is the cache directory.
func (f *Fetcher) Dir() string { return f.dir }
