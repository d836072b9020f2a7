package fetchhelper

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/sourcecache"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// fakeEnv makes this test binary a fetch helper that misbehaves as the
// variable says (fake).
const fakeEnv = "LOADOUT_FAKE_FETCH_HELPER"

// fakeDirEnv is where the "slow" fake marks itself running.
const fakeDirEnv = "LOADOUT_FAKE_FETCH_HELPER_DIR"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fake(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// remoteMarker stands for bytes a remote sent, which must never reach a
// reason.
const remoteMarker = "REMOTE-BODY-MARKER-91c2"

// fake is a helper that lies: it writes other bytes under the pinned
// manifest's digest and says it filled it ("lie"), never answers ("hang"),
// answers without end ("flood"), or reports a failure whose reason is
// remote text ("reason").
func fake(mode string) {
	var req Request
	_ = json.NewDecoder(os.Stdin).Decode(&req)
	switch mode {
	case "lie":
		digest, _ := sourcecache.ManifestDigest(req.Source.OCI.Reference)
		path, _ := sourcecache.BlobPath(req.CacheDir, digest)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		_ = os.WriteFile(path, []byte(`{"schemaVersion":2}`), 0o644)
		_ = answer(os.Stdout, Response{})
	case "hang":
		time.Sleep(time.Hour)
	case "flood":
		chunk := []byte(strings.Repeat("x", 1<<10))
		for range 1 << 12 {
			_, _ = os.Stdout.Write(chunk)
		}
	case "slow":
		// Present in the test's directory while running.
		mark := filepath.Join(os.Getenv(fakeDirEnv), strconv.Itoa(os.Getpid()))
		_ = os.WriteFile(mark, nil, 0o644)
		time.Sleep(300 * time.Millisecond)
		_ = os.Remove(mark)
		_ = answer(os.Stdout, Response{Error: "slow", Reason: sourcecache.ReasonFailed})
	case "reason":
		_ = answer(os.Stdout, Response{Error: remoteMarker, Reason: "registry said: " + remoteMarker})
	}
}

// pushed is a skill pushed to an in-process registry, pinned by digest.
func pushed(t *testing.T) contract.SkillSource {
	t.Helper()
	dir := t.TempDir()
	packtest.Write(t, dir)
	tree, err := skillpack.ReadDir(filepath.Join(dir, "pdf"))
	if err != nil {
		t.Fatal(err)
	}
	ref := packtest.Push(t, tree, testnet.Registry(t)+"/skills/pdf")
	return contract.SkillSource{OCI: &contract.OCISource{Reference: ref}}
}

// TestHelper_TheSidecarFetchesThroughItsHelper: the sidecar's fetcher runs
// loadout-fetch (built here) to fill the cache and serves the skill it
// verified; a second fetch is served from the cache without the helper.
func TestHelper_TheSidecarFetchesThroughItsHelper(t *testing.T) {
	bin := testenv.GoBuild(t, t.TempDir(), "./cmd/loadout-fetch")
	src := pushed(t)
	cache := t.TempDir()
	h, err := New(context.Background(), bin, sourcecache.Config{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	f := sourcecache.New(cache, h, nil)
	tree, err := f.Fetch(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if md, ok := tree.File("SKILL.md"); !ok || !strings.Contains(string(md.Content), "name: pdf") {
		t.Fatalf("SKILL.md %q", md.Content)
	}
	h.Path = filepath.Join(t.TempDir(), "gone")
	if _, err := f.Fetch(context.Background(), src); err != nil {
		t.Fatalf("from the cache: %v", err)
	}
	// A credentials file the helper cannot read stops the sidecar at start.
	bad := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), bin, sourcecache.Config{CacheDir: cache, RegistryConfig: bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a registry config that does not parse: err = %v, want it named", err)
	}
}

// TestHelper_ALyingOrHungHelperServesNothing: the helper is subverted (by
// what it parsed) or broken. It writes other bytes under the pinned digest
// and says it succeeded: the sidecar's own check refuses them. It never
// answers: it is killed at the fetch's deadline. It answers without end:
// only a bounded part is read and the fill fails. It reports a reason made
// of remote text: the reason shown is a fixed phrase, the text goes to the
// log only. A missing helper fails the fetch, naming it. R-SRC-2
func TestHelper_ALyingOrHungHelperServesNothing(t *testing.T) {
	src := contract.SkillSource{OCI: &contract.OCISource{Reference: "registry.example.com/skills/pdf@sha256:" + strings.Repeat("a", 64)}}
	for _, c := range []struct {
		mode, path, reason string
	}{
		{"lie", os.Args[0], sourcecache.ReasonVerification},
		{"hang", os.Args[0], sourcecache.ReasonDeadline},
		{"flood", os.Args[0], ReasonHelper},
		{"reason", os.Args[0], sourcecache.ReasonFailed},
		{"missing", filepath.Join(t.TempDir(), "no-such-helper"), ReasonHelper},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Setenv(fakeEnv, c.mode)
			cache := t.TempDir()
			f := sourcecache.New(cache, &Helper{Path: c.path, Config: sourcecache.Config{CacheDir: cache}}, nil)
			// The hung helper gets a short deadline; the others one long
			// enough for this test binary (the fake helper) to start
			// under the race detector on a loaded machine.
			deadline := time.Minute
			if c.mode == "hang" {
				deadline = 500 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			_, err := f.Fetch(ctx, src)
			if err == nil || sourcecache.Reason(err) != c.reason {
				t.Fatalf("err = %v, reason %q; want %q", err, sourcecache.Reason(err), c.reason)
			}
			if took := time.Since(start); c.mode == "hang" && took > deadline+waitDelay+2*time.Second {
				t.Errorf("the fetch took %v, past its deadline", took)
			}
			if c.mode == "reason" && !strings.Contains(err.Error(), remoteMarker) {
				t.Errorf("the helper's error %v is not in the log's error", err)
			}
			if c.path != os.Args[0] && !strings.Contains(err.Error(), c.path) {
				t.Errorf("err = %v, want the helper named", err)
			}
		})
	}
}

// KnownReason accepts the reasons the vocabulary makes, numbers in their
// templates, and nothing else.
func TestKnownReason_OnlyTheVocabulary(t *testing.T) {
	for s, want := range map[string]bool{
		sourcecache.ReasonDeadline:        true,
		"registry answered HTTP 404":      true,
		"registry answered HTTP 404 nope": false,
		"registry answered HTTP ":         false,
		"registry answered HTTP 4x4":      false,
		"the repository sent over 1048576 bytes: pin a commit of a smaller repository":     true,
		"the source credentials /creds/.dockerconfigjson cannot be read (see hostd's log)": true,
		"the source credentials /etc/shadow cannot be read (see hostd's log)":              false,
		remoteMarker: false,
	} {
		if got := sourcecache.KnownReason(s, sourcecache.Config{CredentialsDir: "/creds"}.CredentialFiles()...); got != want {
			t.Errorf("KnownReason(%q) = %v, want %v", s, got, want)
		}
	}
}

// A context naming many new sources does not start a helper process for
// each at once: at most MaxRunning run, the others wait their turn, and
// every fill ends.
func TestHelper_AtMostMaxRunningHelpersAtOnce(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(fakeEnv, "slow")
	t.Setenv(fakeDirEnv, dir)
	h, err := New(context.Background(), os.Args[0], sourcecache.Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const fills = 3 * MaxRunning
	var wg sync.WaitGroup
	errs := make(chan error, fills)
	for range fills {
		wg.Go(func() {
			errs <- h.Fill(context.Background(), sourcecache.FillRequest{Source: contract.SkillSource{OCI: &contract.OCISource{Reference: "r@sha256:" + strings.Repeat("b", 64)}}})
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(5 * time.Millisecond):
			if marks, err := os.ReadDir(dir); err == nil {
				most = max(most, len(marks))
			}
		}
	}
	close(errs)
	n := 0
	for err := range errs {
		if err == nil || !strings.Contains(err.Error(), "slow") {
			t.Errorf("fill: %v, want the helper's answer", err)
		}
		n++
	}
	if n != fills || most > MaxRunning || most == 0 {
		t.Errorf("%d fills ended, at most %d helpers ran at once; want %d and at most %d", n, most, fills, MaxRunning)
	}
}
