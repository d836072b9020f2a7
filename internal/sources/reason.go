package sources

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/go-git/go-git/v5/plumbing"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// errVerification is sourcecache.ErrVerification, which the git blob
// reader wraps.
var errVerification = sourcecache.ErrVerification

// Reason is sourcecache.Reason: the short, remote-free reason of a failed
// fetch.
func Reason(err error) string { return sourcecache.Reason(err) }

// reasonOf classifies err into a phrase of its own. Status codes are numbers
// and are kept; messages are not.
func reasonOf(err error) string {
	if r, ok := sourcecache.ReasonOf(err); ok {
		return r
	}
	var (
		registry    *transport.Error
		gitHTTP     *githttp.Err
		unknown     x509.UnknownAuthorityError
		hostname    x509.HostnameError
		certErr     *tls.CertificateVerificationError
		netErr      net.Error
		tooLarge    errFetchTooLarge
		credentials errCredentials
	)
	switch {
	case errors.As(err, &tooLarge):
		return tooLarge.Error()
	case errors.As(err, &credentials):
		return credentials.Error()
	case errors.As(err, &registry):
		return fmt.Sprintf(sourcecache.ReasonRegistryHTTP, registry.StatusCode)
	case errors.As(err, &gitHTTP) && gitHTTP.Response != nil:
		return fmt.Sprintf(sourcecache.ReasonGitHTTP, gitHTTP.Response.StatusCode)
	case errors.Is(err, gittransport.ErrRepositoryNotFound):
		return sourcecache.ReasonGitNotFound
	case errors.Is(err, gittransport.ErrAuthenticationRequired), errors.Is(err, gittransport.ErrAuthorizationFailed):
		return sourcecache.ReasonGitAuth
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return sourcecache.ReasonGitObject
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &certErr):
		return sourcecache.ReasonTLS
	case errors.As(err, &netErr) && netErr.Timeout():
		return sourcecache.ReasonDeadline
	case errors.As(err, &netErr):
		return sourcecache.ReasonConnect
	}
	return sourcecache.ReasonFailed
}
