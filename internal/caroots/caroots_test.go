package caroots

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
)

// A process that makes no https request never parses the bundle; its first
// https request through a Transport installs the roots, a plain http one
// does not. Each case runs in a child process, since the roots are
// installed once per process.
func TestRootsInstalledOnFirstHTTPSRequestOnly(t *testing.T) {
	for _, tc := range []string{"idle", "http", "https"} {
		t.Run(tc, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestChildRequest$", "-test.v")
			cmd.Env = append(os.Environ(), "CAROOTS_CHILD="+tc)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc, err, out)
			}
		})
	}
}

func TestChildRequest(t *testing.T) {
	mode := os.Getenv("CAROOTS_CHILD")
	if mode == "" {
		t.Skip("run by TestRootsInstalledOnFirstHTTPSRequestOnly")
	}
	if Installed() {
		t.Fatal("roots installed at start")
	}
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	var srv *httptest.Server
	switch mode {
	case "http":
		srv = httptest.NewServer(h)
	case "https":
		srv = httptest.NewTLSServer(h)
	}
	if srv != nil {
		defer srv.Close()
		next := srv.Client().Transport // trusts the test server's certificate
		client := &http.Client{Transport: Transport(next)}
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if want := mode == "https"; Installed() != want {
		t.Errorf("after %s: roots installed = %v, want %v", mode, Installed(), want)
	}
}

// The bundle parses, and a process may ask for the roots more than once
// (crypto/x509 itself panics on a second SetFallbackRoots).
func TestEnsureTwice(t *testing.T) {
	if os.Getenv("CAROOTS_CHILD") != "" {
		t.Skip()
	}
	Ensure()
	Ensure()
	if !Installed() {
		t.Error("Ensure did not install the roots")
	}
}
