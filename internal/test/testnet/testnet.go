// Package testnet holds the helpers of tests that run real listeners on
// loopback (hostd, the tool server, the manager, the agent harnesses), so
// that each of them waits for and reads a listener the same way.
package testnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FreeAddr returns a loopback address nothing listens on at the moment: for
// a listener the test starts, or for a URL that must find nobody there.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// WaitStatus polls GET url until it answers want, for at most 30 seconds: a
// listener started in a goroutine or in a new process is not up at once,
// and a busy CI machine can take long to start one.
func WaitStatus(t testing.TB, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := Answers(url, want)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never answered %d (last: %v)", url, want, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Answers is nil when GET url answers want, else the request's error or
// the status it got: one try of a wait for a listener to be ready.
func Answers(url string, want int) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("GET %s: status %d, want %d", url, resp.StatusCode, want)
	}
	return nil
}

// Get is GET url's status code and body; it fails t when the request or the
// read fails.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	return GetWith(t, nil, url)
}

// GetWith is Get sent with c (http.DefaultClient when nil): a client with a
// timeout fails the test where a listener that stopped answering would hang
// it.
func GetWith(t testing.TB, c *http.Client, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, c, req)
}

// GitServer serves the git repositories under root (each its own directory,
// URL path /NAME/.git for a work tree) with git's own smart-HTTP backend
// (git-http-backend run as a CGI program), over TLS when tls is set, until
// the test ends. Each request runs a git process, so the server's memory is
// never the test process's. The test is skipped where git is not installed.
func GitServer(t testing.TB, root string, tls bool) *httptest.Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("needs git")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("needs git-http-backend")
	}
	srv := httptest.NewUnstartedServer(&cgi.Handler{Path: backend, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// PostJSON POSTs body to url as JSON (a string as it is, anything else
// encoded) and decodes the answer into out unless out is nil; it returns the
// status and fails t when the request or the decoding fails.
func PostJSON(t testing.TB, url string, body, out any) int {
	t.Helper()
	return PostJSONWith(t, nil, url, body, out)
}

// PostJSONWith is PostJSON sent with c (http.DefaultClient when nil), as
// GetWith is Get.
func PostJSONWith(t testing.TB, c *http.Client, url string, body, out any) int {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	var buf bytes.Buffer
	if s, ok := body.(string); ok {
		buf.WriteString(s)
	} else if err := json.NewEncoder(&buf).Encode(body); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url, "application/json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("decode answer (status %d): %v", resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// PostBearer POSTs body to url with token as its bearer token (none when
// empty) and returns the status and the answer's JSON "error" field: what a
// Service that verifies hostd's token says when it refuses a call.
func PostBearer(t testing.TB, url, body, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}
