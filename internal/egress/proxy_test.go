package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func startProxy(t *testing.T, rules ...string) (string, *[]string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	p := &Proxy{Rules: Normal(rules), Refused: func(target string) { refused = append(refused, target) }}
	go func() { _ = p.Serve(l) }()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), &refused
}

func connect(t *testing.T, proxy, target string) (int, string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := ""
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
	}
	return resp.StatusCode, body, c
}

// The proxy tunnels only to the declared name and port, and its refusal
// names the target and the rules; a request that is not a proxy request
// is refused too.
func TestProxy_TunnelsOnlyDeclaredHosts(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "upstream "+r.Host) }))
	defer up.Close()
	port := up.Listener.Addr().(*net.TCPAddr).Port
	proxy, refused := startProxy(t, "localhost:"+strconv.Itoa(port))

	code, _, c := connect(t, proxy, "localhost:"+strconv.Itoa(port))
	if code != http.StatusOK {
		t.Fatalf("CONNECT to the declared host: %d", code)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "upstream localhost" {
		t.Errorf("through the tunnel: %q", b)
	}

	for _, target := range []string{"127.0.0.1:" + strconv.Itoa(port), "localhost:" + strconv.Itoa(port+1), "localhost.evil.example:" + strconv.Itoa(port)} {
		code, body, _ := connect(t, proxy, target)
		if code != http.StatusForbidden || !strings.Contains(body, RefusalPrefix+" to "+target+" refused") || !strings.Contains(body, "localhost:"+strconv.Itoa(port)) {
			t.Errorf("CONNECT %s: %d %q, want 403 naming it and the rules", target, code, body)
		}
	}
	if len(*refused) != 3 {
		t.Errorf("refusals reported: %v", *refused)
	}

	// A plain request for the declared host reaches it with that host's
	// name, whatever Host header the client sent.
	pc, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	fmt.Fprintf(pc, "GET http://localhost:%d/ HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n", port)
	resp, err = http.ReadResponse(bufio.NewReader(pc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "upstream localhost:"+strconv.Itoa(port) {
		t.Errorf("a plain request through the proxy: %d %q, want the upstream answering for localhost", resp.StatusCode, b)
	}

	resp, err = http.Get("http://" + proxy + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a direct request to the proxy: %d, want 400", resp.StatusCode)
	}
}
