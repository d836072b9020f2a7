package hostd

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

func servedHash(s *Server) string { return s.current.Load().hash }

func TestReload_SwapsOnKubeletUpdate(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	first := servedHash(s)

	reg := fixedRegistry()
	reg.Hooks[0].CEL.Expression = "!call.arguments.text.contains('PASSWORD')"
	reloadWith(t, s, dir, contextData(t, reg))
	if servedHash(s) == first {
		t.Fatal("update not picked up")
	}
	var resp BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("1", "review_note", "SECRET"), &resp)
	if !resp.Allowed {
		t.Fatal("old hook still active after reload")
	}
	post(t, ts.URL+"/v1/before", callBody("2", "review_note", "PASSWORD"), &resp)
	if resp.Allowed {
		t.Fatal("new hook not active after reload")
	}
}

// A bad update keeps the last good context serving its policy, and /readyz
// answers 503 naming why (the agent must not run on a replaced policy with
// nothing red) as do the metrics; fixing it recovers.
func TestReload_BadUpdateKeepsLastGood(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	good := servedHash(s)

	for _, bad := range []struct {
		name  string
		write func()
	}{
		{"hash mismatch", func() {
			data := contextData(t, fixedRegistry())
			data[contract.KeySystemPrompt] = "tampered\n"
			resourcestest.WriteConfigMapDir(t, dir, data)
		}},
		{"hook does not compile", func() {
			reg := fixedRegistry()
			reg.Hooks[0].CEL.Expression = "call.("
			resourcestest.WriteConfigMapDir(t, dir, contextData(t, reg))
		}},
		{"not json", func() {
			data := contextData(t, fixedRegistry())
			data[contract.KeySkills] = "{"
			resourcestest.WriteConfigMapDir(t, dir, data)
		}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			bad.write()
			mustRefuseReload(t, s, ts, good)
			code, ready := testnet.Get(t, ts.URL+"/readyz")
			if code != http.StatusServiceUnavailable || !strings.Contains(ready, good) || !strings.Contains(ready, "lastReloadError") ||
				!strings.Contains(ready, "the newest context was refused") {
				t.Fatalf("readyz = %d %s, want 503 naming the refusal and the last good hash", code, ready)
			}
		})
	}
	if m := get(t, ts.URL+"/metrics"); !strings.Contains(m, `loadout_hostd_context_reloads_total{result="failure"} 3`) {
		t.Fatalf("reload failures not counted:\n%s", grepLines(m, "reloads"))
	}
	reloadWith(t, s, dir, contextData(t, fixedRegistry()))
	if code, ready := testnet.Get(t, ts.URL+"/readyz"); code != http.StatusOK || strings.Contains(ready, "lastReloadError") {
		t.Fatalf("recovered reload: readyz = %d %s, want 200 without an error", code, ready)
	}
}

// Requests racing a stream of reloads always see one whole context: every
// answer comes from a context whose policy is complete (the SECRET hook is in
// all of them), never from a half-loaded one.
func TestReload_ConcurrentWithRequests(t *testing.T) {
	s, ts, dir := newTestServer(t, fixedRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var blocked atomic.Int32
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				var resp BeforeResponse
				post(t, ts.URL+"/v1/before", callBody("c", "review_note", "SECRET"), &resp)
				if resp.Allowed {
					t.Error("a request saw a context without its policy")
					return
				}
				blocked.Add(1)
			}
		})
	}
	for i := range 10 {
		reg := fixedRegistry()
		reg.PromptGuides[0].Text = strings.Repeat("v", i+1)
		resourcestest.WriteConfigMapDir(t, dir, contextData(t, reg))
		if err := s.Reload(ctx, false); err != nil {
			t.Error(err)
		}
	}
	cancel()
	wg.Wait()
	if blocked.Load() == 0 {
		t.Fatal("no request ran during the reloads")
	}
}

func TestRun_PollsForChanges(t *testing.T) {
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, fixedRegistry()))
	s := New(Options{ContextDir: dir, PollInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitFor(t, func() bool { return s.current.Load() != nil })
	first := servedHash(s)
	reg := fixedRegistry()
	reg.Deny = nil
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, reg))
	waitFor(t, func() bool { return servedHash(s) != first })
}

// AfterFirstLoad runs once, after the first context is served, and not
// again on later reloads.
func TestRun_AfterFirstLoadOnce(t *testing.T) {
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, fixedRegistry()))
	var calls atomic.Int32
	var served atomic.Bool
	var s *Server
	s = New(Options{ContextDir: dir, PollInterval: 10 * time.Millisecond, AfterFirstLoad: func() {
		served.Store(s.current.Load() != nil)
		calls.Add(1)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitFor(t, func() bool { return calls.Load() == 1 })
	first := servedHash(s)
	reg := fixedRegistry()
	reg.Deny = nil
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, reg))
	waitFor(t, func() bool { return servedHash(s) != first })
	if n := calls.Load(); n != 1 || !served.Load() {
		t.Errorf("AfterFirstLoad ran %d times (context served at the first: %v), want once after the first load", n, served.Load())
	}
}

func TestFingerprint_PlainDirectory(t *testing.T) {
	dir := resourcestest.Tree(t, contextData(t, fixedRegistry()))
	a := takeFingerprint(dir)
	if err := os.WriteFile(filepath.Join(dir, contract.KeySystemPrompt), []byte("changed, and longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if takeFingerprint(dir) == a {
		t.Fatal("an edited file did not change the fingerprint")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
