// Package caroots gives Loadout's binaries, whose images have no CA bundle
// on disk, the roots compiled into golang.org/x/crypto/x509roots/fallback
// (crypto/x509 uses them only where the system offers none, so a mounted or
// distro bundle still wins).
//
// That package installs them from its init, parsing every certificate at
// start: 0.66 MB allocated and 0.6 MB of heap held for the life of the
// process, the largest single item on the idle sidecar's heap, though most
// contexts make no outbound TLS call at all. Here they are installed on the
// first https request a Transport carries, or when a binary or a fetcher
// asks (Ensure), and never by an import. Binaries import this package, not
// fallback: crypto/x509 accepts fallback roots once.
package caroots

import (
	"crypto/x509"
	"net/http"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

var (
	once      sync.Once
	installed atomic.Bool
)

// Ensure installs the compiled-in roots as crypto/x509's fallback, once.
// Call it before a TLS connection whose configuration names no RootCAs of
// its own; Transport does so for HTTP clients.
func Ensure() {
	once.Do(func() {
		x509.SetFallbackRoots(pool())
		installed.Store(true)
	})
}

// Installed says whether Ensure has run in this process.
func Installed() bool { return installed.Load() }

// pool parses the bundle as x509roots/fallback does, constraints included.
func pool() *x509.CertPool {
	p := x509.NewCertPool()
	for c := range bundle.Roots() {
		cert, err := x509.ParseCertificate(c.Certificate)
		if err != nil {
			panic("caroots: the compiled-in bundle holds an unparsable certificate: " + err.Error())
		}
		if c.Constraint == nil {
			p.AddCert(cert)
		} else {
			p.AddCertWithConstraint(cert, c.Constraint)
		}
	}
	return p
}

// Transport carries requests through next, installing the roots before the
// first https one.
func Transport(next http.RoundTripper) http.RoundTripper { return lazy{next: next} }

type lazy struct{ next http.RoundTripper }

func (l lazy) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" {
		Ensure()
	}
	return l.next.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach next.
func (l lazy) CloseIdleConnections() {
	if c, ok := l.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
