package outbound

import (
	"context"
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

	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func caBundleOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// TestDo_RedirectIsNotFollowedAndItsTargetNeverLeaks: a Service answering
// 302 to a metadata endpoint gets an error naming the status; the target is
// never contacted, so its body cannot appear anywhere.
func TestDo_RedirectIsNotFollowedAndItsTargetNeverLeaks(t *testing.T) {
	svc := testnet.RedirectToMetadata(t, `{"AccessKeyId":"AKIA-LEAKED"}`)
	_, err := New(Options{}).Do(context.Background(), Request{Target: Target{URL: svc.URL}})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusFound {
		t.Fatalf("err = %v, want a 302 StatusError", err)
	}
	if svc.Contacted() || strings.Contains(err.Error(), "AKIA") || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Fatalf("redirect followed (%v) or leaked: %v", svc.Contacted(), err)
	}
}

// TestDo_ErrorBodiesNeverEnterErrors: a 500 answer's body is not read into
// the error.
func TestDo_ErrorBodiesNeverEnterErrors(t *testing.T) {
	svc := testnet.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal secret token=abc", http.StatusInternalServerError)
	})
	_, err := New(Options{}).Do(context.Background(), Request{Target: Target{URL: svc.URL}})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err = %v", err)
	}
}

// TestDo_EachCallHasItsOwnDeadline: a Service that never answers is cut off
// by the client's deadline even when the caller's context has none.
func TestDo_EachCallHasItsOwnDeadline(t *testing.T) {
	release := make(chan struct{})
	svc := testnet.Serve(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
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

// TestDo_SignsCallsTheStandardWebhooksWay: with a key file the client sends
// webhook-id, webhook-timestamp and webhook-signature, which the Standard
// Webhooks reference library verifies with the same whsec_ secret (so a
// Service in any language can); a fresh id per call; a missing or malformed
// key fails the call instead of sending it unsigned.
func TestDo_SignsCallsTheStandardWebhooksWay(t *testing.T) {
	secret := NewSecret()
	keyFile := testenv.TempFile(t, "key", []byte(secret+"\n"), 0o600)
	var got []http.Header
	var gotBody []byte
	svc := testnet.Serve(t, func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		gotBody, _ = io.ReadAll(r.Body)
	})
	body := []byte(`{"audience":{"kind":"tool","name":"t","url":"http://t"},"call":{"id":"1"}}`)
	c := New(Options{SigningKeyFile: keyFile})
	for range 2 {
		if _, err := c.Do(context.Background(), Request{Target: Target{URL: svc.URL}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(gotBody, got[0]); err != nil {
		t.Fatalf("the reference library does not verify hostd's signature: %v (headers %v)", err, got[0])
	}
	if err := wh.Verify([]byte(`{}`), got[0]); err == nil {
		t.Fatal("the signature does not cover the body")
	}
	if got[0].Get(HeaderID) == got[1].Get(HeaderID) || !strings.HasPrefix(got[0].Get(HeaderSignature), "v1,") {
		t.Fatalf("ids %q %q, signature %q", got[0].Get(HeaderID), got[1].Get(HeaderID), got[0].Get(HeaderSignature))
	}
	for name, content := range map[string]string{"missing": "", "not base64": "whsec_???", "too short": "whsec_c2hvcnQ="} {
		f := keyFile + ".missing"
		if content != "" {
			f = filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := New(Options{SigningKeyFile: f}).Do(context.Background(), Request{Target: Target{URL: svc.URL}, Body: body}); err == nil {
			t.Errorf("%s key file: the call went out unsigned", name)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d calls reached the Service, want the 2 signed ones", len(got))
	}
}

// TestDo_ResponsesAreCapped: an answer over the cap is an error, not a
// buffer that grows.
func TestDo_ResponsesAreCapped(t *testing.T) {
	svc := testnet.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(make([]byte, 2048))
	})
	if _, err := New(Options{MaxResponseBytes: 1024}).Do(context.Background(), Request{Target: Target{URL: svc.URL}}); err == nil || !strings.Contains(err.Error(), "exceeds 1024") {
		t.Fatalf("err = %v", err)
	}
}

// Outside a cluster (make demo) hostd dials a Service's host:port at a local
// address; the URL and Host header stay the Service's.
func TestClient_AddressesDialAServiceElsewhereKeepingItsHost(t *testing.T) {
	var host string
	srv := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		host = r.Host
		_, _ = w.Write([]byte("{}"))
	})
	c := New(Options{Addresses: map[string]string{"review-notes.team-a.svc:8080": srv.Listener.Addr().String()}})
	if _, err := c.Do(t.Context(), Request{Target: Target{URL: "http://review-notes.team-a.svc:8080/notes"}, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if host != "review-notes.team-a.svc:8080" {
		t.Fatalf("Host header %q", host)
	}
}
