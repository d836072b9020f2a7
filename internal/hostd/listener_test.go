package hostd

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// serveWithLimits starts hostd's real listener (newHTTPServer, with its
// timeouts) on loopback and returns its address.
func serveWithLimits(t *testing.T, limits Limits) (*Server, string) {
	t.Helper()
	return serveListener(t, fixedRegistry(), limits)
}

// serveListener serves a context holding reg on hostd's real listener.
func serveListener(t *testing.T, reg contract.Registry, limits Limits) (*Server, string) {
	t.Helper()
	s, _ := loadContext(t, contextData(t, reg), Options{Limits: limits})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(ln.Addr().String(), s.Handler(), s.opts.Limits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startSlowPost sends a POST's headers announcing a body it never sends:
// the request holds a slot while hostd waits for the body.
func startSlowPost(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST /v1/before HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"call\":"); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitClosed reads until the server closes c (or answers and then closes),
// and fails if that takes longer than within: the server's own timeout must
// close it, well before the test's.
func waitClosed(t *testing.T, c net.Conn, within time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s (read so far %q)", within, got)
	}
	return string(got)
}

// TestAPI_RequestOverTheConcurrencyLimitGetsBusy: with every slot held, the
// next request waits QueueWait and gets 503 naming the reason; once the slots
// free up, requests are served again.
func TestAPI_RequestOverTheConcurrencyLimitGetsBusy(t *testing.T) {
	s, addr := serveWithLimits(t, Limits{MaxConcurrentRequests: 2, QueueWait: 100 * time.Millisecond, ReadTimeout: time.Minute})
	held := []net.Conn{startSlowPost(t, addr), startSlowPost(t, addr)}
	waitFor(t, func() bool { return len(s.limits.slots) == 2 })

	var out ErrorResponse
	if code := post(t, "http://"+addr+"/v1/before", `{"call":{"id":"1","name":"review_note","arguments":{"text":"ok"}}}`, &out); code != http.StatusServiceUnavailable || !strings.Contains(out.Error, "too many concurrent requests") {
		t.Fatalf("third request: status %d %+v, want 503 busy", code, out)
	}
	// GET requests (probes, the registry) never queue behind bodies.
	if code, _ := testnet.Get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz while busy: %d", code)
	}
	for _, c := range held {
		_ = c.Close()
	}
	waitFor(t, func() bool { return len(s.limits.slots) == 0 })
	var ok BeforeResponse
	if code := post(t, "http://"+addr+"/v1/before", `{"call":{"id":"1","name":"review_note","arguments":{"text":"ok"}}}`, &ok); code != http.StatusOK {
		t.Fatalf("after release: status %d", code)
	}
}

// TestAPI_SlowBodyIsCutAtTheReadTimeout: a client trickling its body loses
// its connection at ReadTimeout and gives its slot back.
func TestAPI_SlowBodyIsCutAtTheReadTimeout(t *testing.T) {
	s, addr := serveWithLimits(t, Limits{ReadTimeout: 200 * time.Millisecond})
	c := startSlowPost(t, addr)
	waitFor(t, func() bool { return len(s.limits.slots) == 1 })
	answer := waitClosed(t, c, 5*time.Second)
	if answer != "" && !strings.Contains(answer, "400") {
		t.Fatalf("answer to a cut body: %q", answer)
	}
	waitFor(t, func() bool { return len(s.limits.slots) == 0 })
}

// TestAPI_SlowHeadersAreCutAtTheReadHeaderTimeout: a client that never
// finishes its headers is disconnected.
func TestAPI_SlowHeadersAreCutAtTheReadHeaderTimeout(t *testing.T) {
	_, addr := serveWithLimits(t, Limits{ReadHeaderTimeout: 200 * time.Millisecond})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "POST /v1/before HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c, 5*time.Second)
}

// TestAPI_IdleKeepAliveConnectionIsClosed: after an answer, a keep-alive
// connection that sends nothing more is closed at IdleTimeout.
func TestAPI_IdleKeepAliveConnectionIsClosed(t *testing.T) {
	_, addr := serveWithLimits(t, Limits{IdleTimeout: 200 * time.Millisecond})
	c := dial(t, addr)
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("first answer: status %d close %v, want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read %v, want EOF (closed by the server)", err)
	}
}

// On a Unix socket hostd serves the same API with the same checks: a call is
// decided, a browser-style request with a foreign Host is refused, a stale
// socket from a previous run is replaced and any other file is left alone.
func TestAPI_UnixSocketServesTheSameAPI(t *testing.T) {
	s, _ := loadContext(t, contextData(t, fixedRegistry()), Options{})
	sock := filepath.Join(t.TempDir(), "hostd.sock")
	stale, err := net.Listen("unix", sock) // a previous run's socket
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = stale.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeUnixSocket(ctx, sock) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeUnixSocket: %v", err)
		}
	})
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	post := func(host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+host+"/v1/before", strings.NewReader(`{"call":{"id":"1","name":"review_note","arguments":{"text":"the SECRET"}}}`))
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if resp, err = client.Do(req); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("localhost"); code != http.StatusOK || !strings.Contains(body, `"allowed":false`) || !strings.Contains(body, "notes must not contain secrets") {
		t.Fatalf("over the socket: %d %s", code, body)
	}
	if code, _ := post("evil.example"); code != http.StatusForbidden {
		t.Fatalf("a foreign Host over the socket: %d, want 403", code)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode: %v %v", fi, err)
	}

	file := testenv.TempFile(t, "not-a-socket", []byte("keep"), 0o600)
	if err := s.ServeUnixSocket(context.Background(), file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("a regular file at the path: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Fatal("a regular file at the path was replaced")
	}
}
