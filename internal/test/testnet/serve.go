package testnet

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Serve serves handler on loopback until the test ends: the stand-in
// Service, webhook, registry or collector a test points its client at.
func Serve(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	return ServeHandler(t, handler)
}

// ServeHandler is Serve for a handler the code under test builds (a
// server's API or probe mux).
func ServeHandler(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
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

// Hung listens on loopback, accepts every connection and never answers,
// until the test ends, and returns its address: a registry or Service that
// freezes whoever waits on it without a deadline.
func Hung(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		for {
			select {
			case c := <-conns:
				_ = c.Close()
			default:
				return
			}
		}
	})
	return l.Addr().String()
}
