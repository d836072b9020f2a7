package sources

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/go-git/go-git/v5/plumbing"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// signatureReasons say each signature refusal in words of our own.
var signatureReasons = map[string]string{
	sigcheck.ReasonUnsigned:           "the artifact carries no Sigstore bundle, and only signed skills are accepted",
	sigcheck.ReasonUntrustedSigner:    "no bundle is signed by a key or identity trusted here",
	sigcheck.ReasonDigestMismatch:     "the bundle signs other bytes: the artifact changed after it was signed",
	sigcheck.ReasonInvalidBundle:      "a bundle that is not a message signature this verifier reads",
	sigcheck.ReasonKeylessUnsupported: "only a keyless identity would accept it, and this binary verifies keys only",
}

var (
	// errVerification is content that does not hash to the digest or commit
	// that pinned it.
	errVerification = errors.New("verification failed")
	// errNoSkillFile is a verified tree without the SKILL.md of a skill.
	errNoSkillFile = errors.New("no SKILL.md at the top of the skill")
)

// FetchError is a source that could not be fetched or verified. Err is the
// whole story, for the log: it may quote what the remote answered (a
// registry's error body, a SKILL.md line). Reason is short and made here
// from a fixed set of phrases and status codes, never from remote bytes, so
// it may be shown where the remote must not reach: hostd's /readyz and
// metrics sit on the pod IP without authentication, and a remote body there
// would be reflected SSRF.
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
	return reasonOf(err)
}

// reasonOf classifies err into a phrase of its own. Status codes are numbers
// and are kept; messages are not.
func reasonOf(err error) string {
	var (
		registry    *transport.Error
		gitHTTP     *githttp.Err
		unknown     x509.UnknownAuthorityError
		hostname    x509.HostnameError
		certErr     *tls.CertificateVerificationError
		netErr      net.Error
		tooLarge    errFetchTooLarge
		bigManifest errManifestTooLarge
		credentials errCredentials
		signature   *sigcheck.Error
		unreadable  errRequirements
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the fetch deadline"
	case errors.Is(err, context.Canceled):
		return "fetch cancelled"
	case errors.Is(err, errVerification):
		return "verification failed: the content does not match its pinned digest or commit"
	case errors.Is(err, errNoSkillFile):
		return errNoSkillFile.Error()
	case errors.As(err, &signature):
		// A fixed phrase per reason, and the requirement's name from the
		// signed context: the bundle's bytes never reach it.
		r := "signature refused (" + signature.Reason + "): " + signatureReasons[signature.Reason]
		if signature.DeclaredBy != "" {
			r += "; required by " + signature.DeclaredBy
		}
		return r
	case errors.As(err, &unreadable):
		return reasonRequirements
	case errors.Is(err, errGitUnsigned):
		return errGitUnsigned.Error()
	case errors.As(err, &tooLarge):
		return tooLarge.Error()
	case errors.As(err, &bigManifest):
		return bigManifest.Error()
	case errors.As(err, &credentials):
		return credentials.Error()
	case errors.As(err, &registry):
		return fmt.Sprintf("registry answered HTTP %d", registry.StatusCode)
	case errors.As(err, &gitHTTP) && gitHTTP.Response != nil:
		return fmt.Sprintf("git server answered HTTP %d", gitHTTP.Response.StatusCode)
	case errors.Is(err, gittransport.ErrRepositoryNotFound):
		return "git repository not found"
	case errors.Is(err, gittransport.ErrAuthenticationRequired), errors.Is(err, gittransport.ErrAuthorizationFailed):
		return "git authentication failed"
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return "git commit or path not found"
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &certErr):
		return "TLS verification failed"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "no answer within the fetch deadline"
	case errors.As(err, &netErr):
		return "cannot connect"
	}
	return "fetch failed (the hostd log has the details)"
}
