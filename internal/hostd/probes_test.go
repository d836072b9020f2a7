package hostd

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// The probe listener (hostd --probe-addr, on the pod IP) answers the kubelet
// and Prometheus, and nothing else: the /v1 API has no authentication and
// must stay reachable from loopback only.
func TestProbeHandler_ServesProbesAndMetricsButNotTheAPI(t *testing.T) {
	s, _, _ := newTestServer(t, fixedRegistry())
	probes := testnet.ServeHandler(t, s.ProbeHandler())

	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  `"hash":"sha256:`,
		"/metrics": "loadout_hostd_context_loaded 1",
	} {
		code, body := testnet.Get(t, probes.URL+path)
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s on the probe listener = %d %q, want 200 containing %q", path, code, body, want)
		}
	}
	for _, req := range []struct{ method, path string }{
		{"POST", "/v1/before"}, {"POST", "/v1/after"}, {"POST", "/v1/render"}, {"POST", "/v1/activate"}, {"GET", "/v1/registry"},
	} {
		r, err := http.NewRequest(req.method, probes.URL+req.path, strings.NewReader(`{"call":{"id":"1","name":"review_note","arguments":{}}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s on the probe listener = %d, want 404 (the API is loopback-only)", req.method, req.path, resp.StatusCode)
		}
	}
}

func TestProbeHandler_NotReadyUntilAContextLoads(t *testing.T) {
	s := New(Options{ContextDir: t.TempDir()})
	probes := testnet.ServeHandler(t, s.ProbeHandler())
	if code, _ := testnet.Get(t, probes.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d before any load, want 200 (alive, so the kubelet does not restart it)", code)
	}
	if code, body := testnet.Get(t, probes.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d %q with no context, want 503", code, body)
	}
}

func TestListenAndServeProbes_StopsWithTheContext(t *testing.T) {
	s, _, _ := newTestServer(t, fixedRegistry())
	addr := testnet.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServeProbes(ctx, addr) }()
	testnet.WaitStatus(t, "http://"+addr+"/readyz", http.StatusOK)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServeProbes after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServeProbes did not return after its context was cancelled")
	}
}
