package skillsources

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/sources"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// owner plays hostd: the lock the Keeper's methods run under, the failures
// counted and each arrival.
type owner struct {
	mu       sync.Mutex
	failures atomic.Int32
	arrivals chan bool
}

func newKeeper(t *testing.T, o *owner, retry time.Duration) *Keeper {
	t.Helper()
	o.arrivals = make(chan bool, 16)
	k := New(Options{Fetcher: sources.New(sources.Options{CacheDir: t.TempDir()}).Fetcher, Retry: retry, Lock: &o.mu, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Failed: func() { o.failures.Add(1) }, Arrived: func(_ context.Context, serveAgain bool) { o.arrivals <- serveAgain }})
	t.Cleanup(k.Wait)
	return k
}

// pdfContext is a published context whose skill pdf ("Reads PDFs.") is
// pinned at ref, or has no skill when ref is empty.
func pdfContext(t *testing.T, ref string) *published.Context {
	t.Helper()
	root := resources.Root{Name: "p"}
	if ref != "" {
		root.Skills = []resources.Skill{{Name: "pdf", Description: "Reads PDFs.",
			Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: ref}}, Origin: resources.Origin{Root: "p", Namespace: "p", Object: "pdf"}}}
	}
	res, err := resources.Render(resources.Input{Roots: []resources.Root{root}})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := published.Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func pushPDF(t *testing.T, description, body string) string {
	t.Helper()
	tree := skillpack.Tree{{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: []byte("---\nname: pdf\ndescription: " + description + "\n---\n" + body + "\n")}}
	return packtest.Push(t, tree, testnet.Registry(t)+"/skills/pdf")
}

// status is one call of Unserved.
type status struct {
	skill              string
	failing, previous  bool
	reason, sourceName string
}

// serve is the owner's serve: Serve, then Fetch, under the lock.
func serve(t *testing.T, o *owner, k *Keeper, pc *published.Context) (*published.Context, []status, string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	full, content := k.Serve(pc)
	body := ""
	if full.Holds("pdf") {
		doc := full.Skills()[0]
		got, err := content.SkillContent(t.Context(), doc)
		if err != nil {
			t.Fatalf("SkillContent of a held skill: %v", err)
		}
		body = string(got.SkillMD)
	}
	k.Fetch(t.Context())
	var out []status
	k.Unserved(func(skill, source string, failing bool, reason string, previous bool) {
		out = append(out, status{skill: skill, sourceName: source, failing: failing, reason: reason, previous: previous})
	})
	return full, out, body
}

func arrived(t *testing.T, o *owner) bool {
	t.Helper()
	select {
	case serveAgain := <-o.arrivals:
		return serveAgain
	case <-time.After(30 * time.Second):
		t.Fatal("no fetch ended within 30s")
		return false
	}
}

// A pinned skill is pending until its source arrives, then served; a
// version bump keeps the previous version serving while the new one is
// fetched; a context that no longer pins a source makes the Keeper forget
// it.
func TestKeeper_PinnedSkillArrivesAndAVersionBumpKeepsThePreviousOne(t *testing.T) {
	o := &owner{}
	k := newKeeper(t, o, time.Hour)
	v1 := pdfContext(t, pushPDF(t, "Reads PDFs.", "V1"))

	full, st, _ := serve(t, o, k, v1)
	if full.Holds("pdf") || len(st) != 1 || st[0].failing || st[0].previous || st[0].skill != "pdf" {
		t.Fatalf("before its source arrived: holds %v, unserved %+v; want pending, fetching, nothing served", full.Holds("pdf"), st)
	}
	if !arrived(t, o) {
		t.Fatal("the fetched source of the served context did not ask to be served")
	}
	full, st, body := serve(t, o, k, v1)
	if !full.Holds("pdf") || len(st) != 0 || !strings.Contains(body, "V1") {
		t.Fatalf("after it arrived: holds %v, unserved %+v, SKILL.md %q", full.Holds("pdf"), st, body)
	}

	v2 := pdfContext(t, pushPDF(t, "Reads PDFs.", "V2"))
	full, st, body = serve(t, o, k, v2)
	if !full.Holds("pdf") || len(st) != 1 || !st[0].previous || st[0].failing || !strings.Contains(body, "V1") {
		t.Fatalf("while v2 is fetched: holds %v, unserved %+v, SKILL.md %q; want v1 serving as the previous version", full.Holds("pdf"), st, body)
	}
	arrived(t, o)
	if _, _, body = serve(t, o, k, v2); !strings.Contains(body, "V2") {
		t.Fatalf("after v2 arrived, SKILL.md %q", body)
	}

	serve(t, o, k, pdfContext(t, ""))
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(k.states) != 0 {
		t.Errorf("the Keeper still holds %d sources no context pins", len(k.states))
	}
}

// Content that was fetched and verified but does not agree with its Skill
// (another description) is not served: the source is failing with a fixed
// reason, counted and logged once, not on every serve.
func TestKeeper_ContentThatDisagreesWithItsSkillIsRefusedOnce(t *testing.T) {
	o := &owner{}
	k := newKeeper(t, o, time.Hour)
	pc := pdfContext(t, pushPDF(t, "Writes poems.", "BODY"))
	serve(t, o, k, pc)
	arrived(t, o)
	for range 2 {
		full, st, _ := serve(t, o, k, pc)
		if full.Holds("pdf") || len(st) != 1 || !st[0].failing || st[0].reason != reasonDisagrees {
			t.Fatalf("holds %v, unserved %+v; want failing: %s", full.Holds("pdf"), st, reasonDisagrees)
		}
	}
	if n := o.failures.Load(); n != 1 {
		t.Errorf("failures counted %d times, want once", n)
	}
}

// A source that cannot be fetched is failing with a short reason and is
// tried again only once Retry has passed since its last try.
func TestKeeper_AFailedSourceIsTriedAgainAfterRetry(t *testing.T) {
	o := &owner{}
	k := newKeeper(t, o, 300*time.Millisecond)
	missing := testnet.Registry(t) + "/skills/pdf@sha256:" + strings.Repeat("c", 64)
	pc := pdfContext(t, missing)
	serve(t, o, k, pc)
	if arrived(t, o) {
		t.Fatal("a failed fetch asked to be served")
	}
	_, st, _ := serve(t, o, k, pc) // within Retry: no new fetch
	if len(st) != 1 || !st[0].failing || st[0].reason == "" || strings.Contains(st[0].reason, "sha256") {
		t.Fatalf("unserved %+v; want failing with a short reason", st)
	}
	if n := o.failures.Load(); n != 1 {
		t.Fatalf("%d failures before the retry, want 1", n)
	}
	time.Sleep(350 * time.Millisecond)
	serve(t, o, k, pc)
	arrived(t, o)
	if n := o.failures.Load(); n != 2 {
		t.Errorf("%d failures after Retry passed, want 2 (tried again)", n)
	}
}
