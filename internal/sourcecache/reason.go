package sourcecache

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// The short reasons of failed fetches: fixed phrases, and templates whose
// only variable parts are numbers or this process's own file names, never
// remote bytes (FetchError). A reason that crosses from the helper process
// must be one of them (KnownReason).
const (
	ReasonDeadline     = "no answer within the fetch deadline"
	ReasonCancelled    = "fetch cancelled"
	ReasonVerification = "verification failed: the content does not match its pinned digest or commit"
	ReasonRegistryHTTP = "registry answered HTTP %d"
	ReasonGitHTTP      = "git server answered HTTP %d"
	ReasonGitNotFound  = "git repository not found"
	ReasonGitAuth      = "git authentication failed"
	ReasonGitObject    = "git commit or path not found"
	ReasonTLS          = "TLS verification failed"
	ReasonConnect      = "cannot connect"
	ReasonFailed       = "fetch failed (the hostd log has the details)"
	// ReasonFetchTooLarge is a git server that sent more than a fetch's budget.
	ReasonFetchTooLarge = "the repository sent over %d bytes: pin a commit of a smaller repository"
	// ReasonCredentials names a credentials file of this process's own flags.
	ReasonCredentials = "the source credentials %s cannot be read (see hostd's log)"
	manifestCutOff    = "the registry's %s went on past the distribution spec's bound of %d bytes (4 MiB): cut off there"
	manifestRefused   = "the registry's %s is %d bytes, over the distribution spec's bound of %d bytes (4 MiB): refused unread"
)

// reasonTemplates are the reasons with a variable part, for KnownReason.
var reasonTemplates = []string{ReasonRegistryHTTP, ReasonGitHTTP, ReasonFetchTooLarge,
	fmt.Sprintf(manifestCutOff, "manifest", MaxManifestBytes), fmt.Sprintf(manifestCutOff, "config blob", MaxManifestBytes),
	strings.Replace(fmt.Sprintf(manifestRefused, "manifest", -1, MaxManifestBytes), "-1", "%d", 1),
	strings.Replace(fmt.Sprintf(manifestRefused, "config blob", -1, MaxManifestBytes), "-1", "%d", 1)}

// fixedReasons are the reasons without one.
var fixedReasons = []string{ReasonDeadline, ReasonCancelled, ReasonVerification, ReasonGitNotFound, ReasonGitAuth,
	ReasonGitObject, ReasonTLS, ReasonConnect, ReasonFailed, errNoSkillFile.Error(), ErrGitUnsigned.Error(), reasonRequirements}

// KnownReason reports whether s is a reason this package's vocabulary can
// make: a fixed phrase, a template whose %d is a number, or the credentials
// reason for one of credentialFiles. A helper process's reason is shown only
// if it is one; else the fetch shows ReasonFailed.
func KnownReason(s string, credentialFiles ...string) bool {
	for _, r := range fixedReasons {
		if s == r {
			return true
		}
	}
	for _, t := range reasonTemplates {
		if matchNumber(t, s) {
			return true
		}
	}
	for _, f := range credentialFiles {
		if s == fmt.Sprintf(ReasonCredentials, f) {
			return true
		}
	}
	return false
}

// matchNumber reports whether s is template with its one %d a decimal number.
func matchNumber(template, s string) bool {
	before, after, ok := strings.Cut(template, "%d")
	if !ok || !strings.HasPrefix(s, before) || !strings.HasSuffix(s, after) || len(s) <= len(before)+len(after) {
		return false
	}
	for _, c := range s[len(before) : len(s)-len(after)] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// signatureReasons say each signature refusal in words of our own.
var signatureReasons = map[string]string{
	sigcheck.ReasonUnsigned:           "the artifact carries no Sigstore bundle, and only signed skills are accepted",
	sigcheck.ReasonUntrustedSigner:    "no bundle is signed by a key or identity trusted here",
	sigcheck.ReasonDigestMismatch:     "the bundle signs other bytes: the artifact changed after it was signed",
	sigcheck.ReasonInvalidBundle:      "a bundle that is not a message signature this verifier reads",
	sigcheck.ReasonKeylessUnsupported: "only a keyless identity would accept it, and this binary verifies keys only",
}

var (
	// ErrVerification is content that does not hash to the digest or commit
	// that pinned it.
	ErrVerification = errors.New("verification failed")
	// errNoSkillFile is a verified tree without the SKILL.md of a skill.
	errNoSkillFile = errors.New("no SKILL.md at the top of the skill")
	// ErrGitUnsigned is a git source where signatures are required: a
	// commit carries no Sigstore bundle.
	ErrGitUnsigned = errors.New("only signed OCI skills are accepted here (a git source carries no Sigstore signature)")
)

// errRequirements is a context whose signer requirements do not parse:
// its OCI skills are refused, never loaded unchecked.
type errRequirements struct{ err error }

// reasonRequirements is errRequirements' short reason.
const reasonRequirements = "the context's skill signer requirements cannot be read, so its external skills are refused"

func (e errRequirements) Error() string { return reasonRequirements + ": " + e.err.Error() }
func (e errRequirements) Unwrap() error { return e.err }

// MaxManifestBytes bounds an OCI manifest and the config blob it names: the
// distribution spec's 4 MiB, which registries enforce on push. A skill's
// manifest is a few hundred bytes.
const MaxManifestBytes = 4 << 20

// ManifestTooLargeError is a manifest or config blob over
// MaxManifestBytes, refused before it is read (by its Content-Length or its
// descriptor) or as soon as more than that arrived.
type ManifestTooLargeError struct {
	What string
	Size int64 // -1: not announced
}

func (e ManifestTooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf(manifestCutOff, e.What, MaxManifestBytes)
	}
	return fmt.Sprintf(manifestRefused, e.What, e.Size, MaxManifestBytes)
}

// FetchError is a source that could not be fetched or verified. Err is the
// whole story, for the log: it may quote what the remote answered (a
// registry's error body, a SKILL.md line). Reason is short and made from a
// fixed set of phrases and numbers, never from remote bytes, so it may be
// shown where the remote must not reach: hostd's /readyz and metrics sit on
// the pod IP without authentication, and a remote body there would be
// reflected SSRF.
type FetchError struct {
	Source string
	Reason string
	Err    error
}

func (e *FetchError) Error() string { return "source " + e.Source + ": " + e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// Reason is the short, remote-free reason of a failed fetch: a
// *FetchError's own, else one classified from err.
func Reason(err error) string {
	var fe *FetchError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	if r, ok := ReasonOf(err); ok {
		return r
	}
	return ReasonFailed
}

// ReasonOf classifies the failures this package knows (deadlines,
// verification, signatures, sizes); ok is false for others, which the
// Filler that made them classifies.
func ReasonOf(err error) (string, bool) {
	var (
		bigManifest ManifestTooLargeError
		signature   *sigcheck.Error
		unreadable  errRequirements
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonDeadline, true
	case errors.Is(err, context.Canceled):
		return ReasonCancelled, true
	case errors.Is(err, ErrVerification):
		return ReasonVerification, true
	case errors.Is(err, errNoSkillFile):
		return errNoSkillFile.Error(), true
	case errors.As(err, &signature):
		// A fixed phrase per reason, and the requirement's name from the
		// signed context: the bundle's bytes never reach it.
		r := "signature refused (" + signature.Reason + "): " + signatureReasons[signature.Reason]
		if signature.DeclaredBy != "" {
			r += "; required by " + signature.DeclaredBy
		}
		return r, true
	case errors.As(err, &unreadable):
		return reasonRequirements, true
	case errors.Is(err, ErrGitUnsigned):
		return ErrGitUnsigned.Error(), true
	case errors.As(err, &bigManifest):
		return bigManifest.Error(), true
	}
	return "", false
}
