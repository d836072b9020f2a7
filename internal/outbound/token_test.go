package outbound

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// TestDo_PresentsTheServiceTokenAndPicksUpARotatedFile: every call carries
// the token of the file as a bearer token; once the TTL passes, a file the
// kubelet rewrote is read again; a removed file fails the call instead of
// sending it without a token, and no error carries the token.
func TestDo_PresentsTheServiceTokenAndPicksUpARotatedFile(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	svc := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	})
	file := filepath.Join(t.TempDir(), "token")
	write := func(tok string) {
		// As the kubelet does: a new file renamed over the old one.
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write("first.jwt.token\n")
	now := time.Unix(1_800_000_000, 0)
	c := New(Options{ServiceTokenFile: file, TokenTTL: time.Minute, Now: func() time.Time { return now }})
	call := func() error {
		_, err := c.Do(context.Background(), Request{Target: Target{URL: svc.URL + "/notes"}, Body: []byte(`{}`)})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	write("second.jwt.token")
	if err := call(); err != nil { // within the TTL: the cached token
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if err := call(); err != nil { // after it: the rotated file
		t.Fatal(err)
	}
	want := []string{"Bearer first.jwt.token", "Bearer first.jwt.token", "Bearer second.jwt.token"}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Authorization headers %q, want %q", got, want)
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	err := call()
	if err == nil || !strings.Contains(err.Error(), "service token") {
		t.Fatalf("missing token file: %v", err)
	}
	if strings.Contains(err.Error(), "jwt") {
		t.Fatalf("error carries the token: %v", err)
	}
	if len(seen) != 3 {
		t.Fatalf("a call went out without its token: %q", seen)
	}
	write("  \n")
	if err := call(); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty token file: %v", err)
	}
}

// TestDo_NoServiceTokenFileSendsNoAuthorization: outside a cluster
// (Standard Webhooks signing only) no bearer token is sent.
func TestDo_NoServiceTokenFileSendsNoAuthorization(t *testing.T) {
	var got string
	svc := testnet.Serve(t, func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") })
	if _, err := New(Options{}).Do(context.Background(), Request{Target: Target{URL: svc.URL}}); err != nil {
		t.Fatal(err)
	}
	if got != "" {
		t.Fatalf("Authorization %q", got)
	}
}
