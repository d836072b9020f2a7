package testnet

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Serve serves handler on loopback until the test ends: the stand-in
// Service, webhook, registry or collector a test points its client at.
func Serve(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// MetadataRedirect is a Service that answers every request with a 302 to a
// cloud metadata endpoint serving secrets: what a client that followed
// redirects would contact, and could leak into its errors.
type MetadataRedirect struct {
	// URL is the redirecting Service's.
	URL       string
	contacted atomic.Bool
}

// RedirectToMetadata starts a MetadataRedirect whose endpoint answers body;
// both serve until the test ends.
func RedirectToMetadata(t testing.TB, body string) *MetadataRedirect {
	t.Helper()
	m := &MetadataRedirect{}
	metadata := Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		m.contacted.Store(true)
		_, _ = io.WriteString(w, body)
	})
	m.URL = Serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, metadata.URL+"/latest/meta-data/iam", http.StatusFound)
	}).URL
	return m
}

// Contacted says whether anything reached the metadata endpoint.
func (m *MetadataRedirect) Contacted() bool { return m.contacted.Load() }
