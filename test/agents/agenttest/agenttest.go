// Package agenttest runs real agents' surroundings for the agent tests: the
// loadout binary, a real `loadout hostd` on the samples' context (mounted as
// the kubelet mounts a ConfigMap), the samples' review-notes Service (its own
// binary, samples/review-notes), and the pinned agent CLIs of
// test/agents/cli. The scripted model servers the CLIs
// talk to live beside the tests of each agent.
package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

// RepoRoot is the repository's root directory.
var RepoRoot = testenv.RepoRoot

// loadoutBinary is the loadout binary; make builds bin/loadout and sets
// $LOADOUT_BIN.
var loadoutBinary = &testenv.Binary{Package: "./cmd/loadout", Env: "LOADOUT_BIN"}

// Loadout returns the loadout binary: $LOADOUT_BIN when set, else one built
// once per test process into a temporary directory that Main removes.
func Loadout(t testing.TB) string {
	t.Helper()
	return loadoutBinary.Path(t)
}

// reviewNotesBinary is the samples' review-notes binary; make builds
// bin/review-notes and sets $LOADOUT_REVIEW_NOTES_BIN.
var reviewNotesBinary = &testenv.Binary{Package: "./samples/review-notes", Env: "LOADOUT_REVIEW_NOTES_BIN"}

// ReviewNotesBinary returns the samples' review-notes binary:
// $LOADOUT_REVIEW_NOTES_BIN when set, else one built once per test process
// into a temporary directory that Main removes.
func ReviewNotesBinary(t testing.TB) string {
	t.Helper()
	return reviewNotesBinary.Path(t)
}

// Main is the TestMain of the agent test packages: it runs the tests, then
// removes the binaries Loadout and ReviewNotesBinary built, and exits with
// the tests' code.
func Main(m *testing.M) {
	code := m.Run()
	loadoutBinary.Remove()
	reviewNotesBinary.Remove()
	os.Exit(code)
}

// CLI returns the path of a pinned agent CLI (claude, codex) from
// $LOADOUT_AGENT_CLIS (`make test` sets it to test/agents/cli/node_modules/.bin
// after `make agent-clis`), else from that directory when it is installed.
// When $LOADOUT_AGENT_CLIS is set the CLI must be there; otherwise a missing
// install skips the test with the command that installs it.
func CLI(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("LOADOUT_AGENT_CLIS")
	required := dir != ""
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "test", "agents", "cli", "node_modules", ".bin")
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		if required {
			t.Fatalf("%s is not installed in $LOADOUT_AGENT_CLIS=%s: run make agent-clis", name, dir)
		}
		t.Skipf("%s is not installed (%v): run make agent-clis", name, err)
	}
	return path
}

// PiFixture is the directory of the Pi integration's test fixture name:
// manifests every agent harness previews so that their verdicts compare.
func PiFixture(name string) string {
	return filepath.Join(RepoRoot(), "integrations", "pi", "test", "fixtures", name)
}

// PreviewSamples returns the ConfigMap data `loadout preview` publishes for
// the samples' Workspace, or for the manifests in dirs when given.
func PreviewSamples(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	if len(dirs) == 0 {
		dirs = []string{filepath.Join(RepoRoot(), "config", "samples")}
	}
	args := []string{"preview", "-o", "json"}
	for _, d := range dirs {
		args = append(args, "-f", d)
	}
	cmd := exec.Command(Loadout(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loadout %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var doc struct {
		Kind  string            `json:"kind"`
		Data  map[string]string `json:"data"`
		Items []struct {
			Data map[string]string `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("loadout preview output: %v", err)
	}
	if doc.Kind == "List" {
		if len(doc.Items) == 0 {
			t.Fatal("loadout preview published nothing")
		}
		return doc.Items[0].Data
	}
	return doc.Data
}

// MountConfigMap lays data out in dir as the kubelet mounts a ConfigMap
// volume: a timestamped directory, ..data pointing at it (swapped by rename)
// and one link per key.
func MountConfigMap(t testing.TB, dir string, data map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	snap := fmt.Sprintf("..%d", time.Now().UnixNano())
	if err := os.Mkdir(filepath.Join(dir, snap), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, snap, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := os.Symlink(snap, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for k := range data {
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if old != "" && old != snap {
		_ = os.RemoveAll(filepath.Join(dir, old))
	}
}

// Process is a started loadout (or review-notes) process; the test's
// cleanup stops it.
type Process struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	cmd *exec.Cmd
	log *bytes.Buffer
	mu  *sync.Mutex
}

// Log is what the process wrote to stderr so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Stop ends the process and waits for it; stopping twice is harmless.
func (p *Process) Stop() {
	if p.cmd.ProcessState == nil {
		testenv.Interrupt(p.cmd, 10*time.Second)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// start runs bin with args listening on addr and waits until path on it
// answers 200.
func start(t testing.TB, bin, addr, path string, args ...string) *Process {
	t.Helper()
	p := &Process{URL: "http://" + addr, log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = lockedWriter{mu: p.mu, b: p.log}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s %s: %s never answered 200\n%s", filepath.Base(bin), strings.Join(args, " "), path, p.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Hostd is a running `loadout hostd`.
type Hostd struct {
	*Process
	// ContextDir is where the context is mounted; MountConfigMap on it
	// publishes a new one.
	ContextDir string
	// TreeDir is the materialized tree (--materialize).
	TreeDir string
}

// StartHostd runs `loadout hostd` on data mounted as a ConfigMap, with
// --materialize into a fresh directory, the unsigned context `loadout
// preview` publishes allowed, and extra flags; it returns once /readyz
// answers 200.
func StartHostd(t testing.TB, data map[string]string, extra ...string) *Hostd {
	t.Helper()
	work := t.TempDir()
	h := &Hostd{ContextDir: filepath.Join(work, "context"), TreeDir: filepath.Join(work, "tree")}
	MountConfigMap(t, h.ContextDir, data)
	addr := testnet.FreeAddr(t)
	args := append([]string{"hostd", "--allow-unsigned-context", "--context-dir", h.ContextDir,
		"--addr", addr, "--materialize", h.TreeDir, "--poll-interval", "100ms"}, extra...)
	h.Process = start(t, Loadout(t), addr, "/readyz", args...)
	return h
}

// ReviewNotes is a running review-notes (samples/review-notes), the Service
// of the samples' runnable review_note tool.
type ReviewNotes struct {
	*Process
	// HostdArgs point hostd's calls to the registry's Service URL at it.
	HostdArgs []string
}

// StartReviewNotes runs the review-notes Service for the review_note tool of
// the published data's manifest.
func StartReviewNotes(t testing.TB, data map[string]string) *ReviewNotes {
	t.Helper()
	return StartReviewNotesFrom(t, ReviewNotesBinary(t), data)
}

// StartReviewNotesFrom is StartReviewNotes with a review-notes binary the
// caller built.
func StartReviewNotesFrom(t testing.TB, bin string, data map[string]string) *ReviewNotes {
	t.Helper()
	var manifest struct {
		Tools []struct {
			Name    string `json:"name"`
			Service *struct {
				URL string `json:"url"`
			} `json:"service"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(data["manifest.json"]), &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	var host string
	for _, tool := range manifest.Tools {
		if tool.Name == "review_note" && tool.Service != nil {
			u, err := url.Parse(tool.Service.URL)
			if err != nil {
				t.Fatal(err)
			}
			host = u.Host
		}
	}
	if host == "" {
		t.Fatal("the manifest has no runnable review_note tool")
	}
	addr := testnet.FreeAddr(t)
	p := start(t, bin, addr, "/healthz", "--addr", addr)
	return &ReviewNotes{Process: p, HostdArgs: []string{"--service-address", host + "=" + addr}}
}

// Notes are the notes the Service recorded, as their texts.
func (r *ReviewNotes) Notes(t testing.TB) []string {
	t.Helper()
	_, body := testnet.Get(t, r.URL+"/notes")
	var list notes.List
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 0, len(list.Notes))
	for _, n := range list.Notes {
		texts = append(texts, n.Text)
	}
	return texts
}
