package outbound

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func caBundleOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// TestDo_RedirectIsNotFollowedAndItsTargetNeverLeaks: a Service answering
// 302 to a metadata endpoint gets an error naming the status; the target is
// never contacted, so its body cannot appear anywhere.
func TestDo_RedirectIsNotFollowedAndItsTargetNeverLeaks(t *testing.T) {
	contacted := false
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		contacted = true
		_, _ = io.WriteString(w, `{"AccessKeyId":"AKIA-LEAKED"}`)
	}))
	defer metadata.Close()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, metadata.URL+"/latest/meta-data/iam", http.StatusFound)
	}))
	defer svc.Close()

	_, err := New(Options{}).Do(context.Background(), Request{Target: Target{URL: svc.URL}})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusFound {
		t.Fatalf("err = %v, want a 302 StatusError", err)
	}
	if contacted || strings.Contains(err.Error(), "AKIA") || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Fatalf("redirect followed (%v) or leaked: %v", contacted, err)
	}
}

// TestDo_ErrorBodiesNeverEnterErrors: a 500 answer's body is not read into
// the error.
func TestDo_ErrorBodiesNeverEnterErrors(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal secret token=abc", http.StatusInternalServerError)
	}))
	defer svc.Close()
	_, err := New(Options{}).Do(context.Background(), Request{Target: Target{URL: svc.URL}})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err = %v", err)
	}
}

// TestDo_EachCallHasItsOwnDeadline: a Service that never answers is cut off
// by the client's deadline even when the caller's context has none.
func TestDo_EachCallHasItsOwnDeadline(t *testing.T) {
	release := make(chan struct{})
	svc := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer svc.Close()
	defer close(release)
	_, err := New(Options{Timeout: 50 * time.Millisecond}).Do(context.Background(), Request{Target: Target{URL: svc.URL}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the call's deadline", err)
	}
}

// TestDo_HTTPSVerifiesAgainstTheCABundle: with the Service's CA the call
// succeeds; without it (system roots) or with another CA it fails.
func TestDo_HTTPSVerifiesAgainstTheCABundle(t *testing.T) {
	svc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer svc.Close()
	other := httptest.NewTLSServer(http.NotFoundHandler())
	defer other.Close()
	c := New(Options{})

	resp, err := c.Do(context.Background(), Request{Target: Target{URL: svc.URL, CABundle: caBundleOf(svc)}})
	if err != nil || string(resp.Body) != "ok" {
		t.Fatalf("with its CA: %v", err)
	}
	if _, err := c.Do(context.Background(), Request{Target: Target{URL: svc.URL}}); err == nil {
		t.Fatal("system roots accepted a self-signed Service certificate")
	}
	// httptest servers share one certificate; a fresh CA is another bundle.
	if _, err := c.Do(context.Background(), Request{Target: Target{URL: svc.URL, CABundle: []byte("not pem")}}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("garbage bundle: %v", err)
	}
	if _, err := c.Do(context.Background(), Request{Target: Target{URL: "http://svc.ns.svc/", CABundle: caBundleOf(svc)}}); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("bundle on a plain-HTTP target: %v", err)
	}
	if _, err := c.Do(context.Background(), Request{Target: Target{URL: "file:///etc/passwd"}}); err == nil {
		t.Fatal("file: URL accepted")
	}
}

// TestDo_SignsBodiesWithTheKeyFile: the signature header is the HMAC of the
// exact body under the file's bytes; a missing key fails the call instead of
// sending it unsigned.
func TestDo_SignsBodiesWithTheKeyFile(t *testing.T) {
	key := []byte("s3cret\n")
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	var got string
	var gotBody []byte
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get(SignatureHeader)
		gotBody, _ = io.ReadAll(r.Body)
	}))
	defer svc.Close()
	body := []byte(`{"call":{"id":"1"}}`)
	if _, err := New(Options{SigningKeyFile: keyFile}).Do(context.Background(), Request{Target: Target{URL: svc.URL}, Body: body}); err != nil {
		t.Fatal(err)
	}
	if !Verify(key, gotBody, got) || Verify([]byte("s3cret"), gotBody, got) || Verify(key, []byte(`{}`), got) {
		t.Fatalf("signature %q does not verify exactly", got)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
	if _, err := New(Options{SigningKeyFile: keyFile + ".missing"}).Do(context.Background(), Request{Target: Target{URL: svc.URL}, Body: body}); err == nil {
		t.Fatal("a missing key file sent the call unsigned")
	}
}

// TestDo_ResponsesAreCapped: an answer over the cap is an error, not a
// buffer that grows.
func TestDo_ResponsesAreCapped(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(make([]byte, 2048))
	}))
	defer svc.Close()
	if _, err := New(Options{MaxResponseBytes: 1024}).Do(context.Background(), Request{Target: Target{URL: svc.URL}}); err == nil || !strings.Contains(err.Error(), "exceeds 1024") {
		t.Fatalf("err = %v", err)
	}
}

// Outside a cluster (make demo) hostd dials a Service's host:port at a local
// address; the URL and Host header stay the Service's.
func TestClient_AddressesDialAServiceElsewhereKeepingItsHost(t *testing.T) {
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host = r.Host
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c := New(Options{Addresses: map[string]string{"review-notes.team-a.svc:8080": srv.Listener.Addr().String()}})
	if _, err := c.Do(t.Context(), Request{Target: Target{URL: "http://review-notes.team-a.svc:8080/notes"}, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if host != "review-notes.team-a.svc:8080" {
		t.Fatalf("Host header %q", host)
	}
}
