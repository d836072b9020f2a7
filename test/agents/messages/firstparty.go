package messages

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// APIHost is the host Claude Code reaches when no ANTHROPIC_BASE_URL names
// another: the first-party API, where it also fetches the server-managed
// settings of the organisation its credential belongs to
// (GET /api/claude_code/settings).
const APIHost = "api.anthropic.com"

// SettingsPath is the organisation's settings endpoint on APIHost, read
// from the pinned CLI (2.1.328).
const SettingsPath = "/api/claude_code/settings"

// FirstParty is api.anthropic.com as a Claude Code with no
// ANTHROPIC_BASE_URL reaches it, played on loopback: an HTTPS proxy
// (HTTPS_PROXY) that answers a CONNECT to APIHost itself, over TLS with a
// certificate of a test CA that the session trusts (NODE_EXTRA_CA_CERTS),
// and refuses every other host. On that connection it serves the
// organisation's settings endpoint as the organisation's configuration
// says, and passes everything else to the scripted model. Nothing leaves
// the machine. A session that points ANTHROPIC_BASE_URL elsewhere counts
// for Claude Code as a custom endpoint, which is not eligible for
// server-managed settings at all: this is the only way to test them.
type FirstParty struct {
	// Env is what a session needs to reach it: HTTPS_PROXY and
	// NODE_EXTRA_CA_CERTS.
	Env []string

	mu          sync.Mutex
	settings    map[string]any
	fetches     []http.Header
	refused     []string
	unreachable bool
	// apiRequests are the requests passed to the model.
	apiRequests []string
}

// NewFirstParty serves APIHost in front of model until the test ends. With
// settings nil the organisation has no server-managed settings (the
// endpoint answers 404, as Anthropic's does); otherwise it answers them.
func NewFirstParty(t testing.TB, model *Model, settings map[string]any) *FirstParty {
	t.Helper()
	caPEM, leaf := testCertificates(t, APIHost)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	modelURL, err := url.Parse(model.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &FirstParty{settings: settings}
	api := http.NewServeMux()
	api.HandleFunc(SettingsPath, f.serveSettings)
	model2 := httputil.NewSingleHostReverseProxy(modelURL)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.apiRequests = append(f.apiRequests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		model2.ServeHTTP(w, r)
	})
	conns := newConnListener()
	inner := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inner.Serve(conns) }()
	t.Cleanup(func() { _ = inner.Close() })
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{leaf}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Host != APIHost+":443" {
			f.mu.Lock()
			f.refused = append(f.refused, r.Method+" "+r.Host)
			f.mu.Unlock()
			http.Error(w, "only "+APIHost+" is served here", http.StatusForbidden)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
			_ = conn.Close()
			return
		}
		conns.push(tls.Server(bufferedConn{conn, buf.Reader}, tlsConfig))
	}))
	t.Cleanup(proxy.Close)
	f.Env = []string{"HTTPS_PROXY=" + proxy.URL, "https_proxy=" + proxy.URL, "NODE_EXTRA_CA_CERTS=" + caFile}
	return f
}

// SettingsUnreachable makes the settings endpoint fail as an egress that
// blocks it would: its requests are recorded and their connections
// dropped unanswered, while the model stays reachable.
func (f *FirstParty) SettingsUnreachable() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unreachable = true
}

// SettingsFetches are the headers of every request to the settings
// endpoint, in order.
func (f *FirstParty) SettingsFetches() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.fetches...)
}

// APIRequests are the requests (method and path) that reached the model
// through APIHost.
func (f *FirstParty) APIRequests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.apiRequests...)
}

// Refused are the proxy requests for hosts other than APIHost.
func (f *FirstParty) Refused() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refused...)
}

func (f *FirstParty) serveSettings(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.fetches = append(f.fetches, r.Header.Clone())
	settings, unreachable := f.settings, f.unreachable
	f.mu.Unlock()
	if unreachable {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	// Claude Code takes an answer without Anthropic's request id for an
	// intermediary's and keeps what it had.
	w.Header().Set("request-id", "req_loadout_test")
	if settings == nil {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no settings"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"uuid":     "00000000-0000-4000-8000-000000000048",
		"checksum": "loadout-test-organisation",
		"settings": settings,
	})
}

// testCertificates makes a CA and a leaf for host signed by it: the CA's
// PEM and the leaf as a tls.Certificate.
func testCertificates(t testing.TB, host string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "loadout test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}
}

// bufferedConn reads first what the CONNECT request's reader already
// buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener hands the TLS connections that the proxy answers to an
// http.Server.
type connListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.closed:
		_ = c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, errors.New("closed")
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
