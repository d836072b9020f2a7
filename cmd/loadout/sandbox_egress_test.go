package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/sandbox"
)

// upstreamOn serves "hello from ADDR" on a loopback address of its own
// (all of 127/8 is local on Linux).
func upstreamOn(t *testing.T, ip string) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return ip, l.Addr().(*net.TCPAddr).Port
}

// A sandbox that declares network.hosts lets the command reach those hosts
// by name through the egress proxy `loadout sandbox` starts (plain HTTP and
// CONNECT tunnels alike), refuses any other host through it with a reason
// naming the rule, and still refuses direct connections Landlock was not
// given; the proxy goes away with the command.
func TestSandboxCommand_ReachesOnlyTheDeclaredHosts(t *testing.T) {
	if abi := sandbox.ABI(); abi < 4 {
		t.Skipf("Landlock ABI %d: `loadout sandbox` refuses to run here (fail closed)", abi)
	}
	allowed, aport := upstreamOn(t, "127.0.0.2")
	other, oport := upstreamOn(t, "127.0.0.3")
	ctx := sandboxContextWith(t, t.TempDir(), fmt.Sprintf("{connectPorts: [], hosts: [%q]}", allowed+":"+strconv.Itoa(aport)))
	script := fmt.Sprintf(`
import http.client, os, socket, urllib.error, urllib.request
proxy = os.environ["HTTPS_PROXY"]
print("proxy", proxy.rsplit(":", 1)[1])
print("plain", urllib.request.urlopen("http://%[1]s:%[2]d/").read().decode())
try:
    urllib.request.urlopen("http://%[3]s:%[4]d/")
    print("other reached")
except urllib.error.HTTPError as e:
    print("other", e.code, e.read().decode())
c = http.client.HTTPConnection("127.0.0.1", int(proxy.rsplit(":", 1)[1]))
c.set_tunnel("%[1]s", %[2]d)
c.request("GET", "/")
print("tunnel", c.getresponse().read().decode())
c = http.client.HTTPConnection("127.0.0.1", int(proxy.rsplit(":", 1)[1]))
c.set_tunnel("%[3]s", %[4]d)
try:
    c.request("GET", "/")
    print("other tunnel reached")
except OSError as e:
    print("other tunnel", e)
try:
    socket.create_connection(("%[1]s", %[2]d), timeout=5)
    print("direct reached")
except OSError as e:
    print("direct", e.errno)
`, allowed, aport, other, oport)
	out, err := loadoutCmd(t, "sandbox", "--from", ctx, "--", "python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("loadout sandbox: %v\n%s", err, out)
	}
	text := string(out)
	host := func(ip string, port int) string { return ip + ":" + strconv.Itoa(port) }
	for _, want := range []string{
		"plain hello from " + host(allowed, aport),
		"other 403 [loadout sandbox] egress to " + host(other, oport) + " refused: the sandbox's network.hosts allow " + host(allowed, aport),
		"tunnel hello from " + host(allowed, aport),
		"other tunnel Tunnel connection failed: 403",
		"direct 13", // EACCES: Landlock, the port was not given
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in the output:\n%s", want, text)
		}
	}
	if strings.Contains(text, "reached") {
		t.Errorf("a connection the sandbox does not declare got through:\n%s", text)
	}
	// The proxy lives as long as the command: gone once it exited.
	var port string
	for _, line := range strings.Split(text, "\n") {
		if p, ok := strings.CutPrefix(line, "proxy "); ok {
			port = p
		}
	}
	if port == "" {
		t.Fatalf("no proxy port in the output:\n%s", text)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the egress proxy on port %s outlived its command", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
