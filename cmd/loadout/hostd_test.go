package main

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// startCommand runs a loadout command in-process (its real listeners) until
// the test ends.
func startCommand(t *testing.T, args ...string) {
	t.Helper()
	testenv.StartCommand(t, newRootCommand(), args...)
}

func TestHostd_RefusesAnAPIAddressOffLoopback(t *testing.T) {
	for _, addr := range []string{":8181", "0.0.0.0:8181", "10.0.0.7:8181", "[::]:8181"} {
		cmd := newRootCommand()
		cmd.SetArgs([]string{"hostd", "--allow-unsigned-context", "--context-dir", t.TempDir(), "--addr", addr})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), addr) {
			t.Errorf("hostd --addr=%s: err = %v, want a refusal naming the address and loopback", addr, err)
		}
	}
}

// hostd --probe-addr serves the probes on a second listener while the API
// stays on --addr; the probe listener has no /v1 routes.
func TestHostd_ProbeAddrServesProbesOnASecondListener(t *testing.T) {
	api, probes := testnet.FreeAddr(t), testnet.FreeAddr(t)
	startCommand(t, "hostd", "--allow-unsigned-context", "--context-dir", t.TempDir(), "--addr", api, "--probe-addr", probes)

	testnet.WaitStatus(t, "http://"+probes+"/healthz", http.StatusOK)
	// The empty directory holds no context: not ready, on both listeners.
	testnet.WaitStatus(t, "http://"+probes+"/readyz", http.StatusServiceUnavailable)
	testnet.WaitStatus(t, "http://"+api+"/readyz", http.StatusServiceUnavailable)
	testnet.WaitStatus(t, "http://"+probes+"/metrics", http.StatusOK)
	testnet.WaitStatus(t, "http://"+probes+"/v1/registry", http.StatusNotFound)
	testnet.WaitStatus(t, "http://"+api+"/v1/registry", http.StatusServiceUnavailable)
	// startCommand's cleanup checks that hostd stops, without an error, with
	// its context.
}

func TestHostd_ProbeAddrInUseFailsNamingTheFlag(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	cmd := newRootCommand()
	cmd.SetArgs([]string{"hostd", "--allow-unsigned-context", "--context-dir", t.TempDir(), "--addr", testnet.FreeAddr(t), "--probe-addr", l.Addr().String()})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--probe-addr") {
		t.Errorf("hostd with a busy --probe-addr: err = %v, want an error naming --probe-addr", err)
	}
}

// hostd never loads just any context by default: without a trust anchor it
// refuses to start unless unsigned contexts are asked for, and a malformed
// anchor is named.
func TestHostd_RefusesToStartWithoutATrustAnchor(t *testing.T) {
	t.Setenv("LOADOUT_CONTEXT_KEYS", "")
	for args, want := range map[string]string{
		"":                           "no trust anchor",
		"--context-keys=ed25519 !!!": "--context-keys",
	} {
		cmd := newRootCommand()
		argv := []string{"hostd", "--context-dir", t.TempDir(), "--addr", testnet.FreeAddr(t)}
		if args != "" {
			argv = append(argv, args)
		}
		cmd.SetArgs(argv)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("hostd %s: err = %v, want one naming %q", args, err, want)
		}
	}
}
