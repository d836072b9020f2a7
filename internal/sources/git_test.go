package sources

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/sourcecache"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// commitAll commits the whole work tree of repo and returns the commit id.
func commitAll(t *testing.T, repo *git.Repository, msg string) string {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1e9, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// fixtureRepo is a fresh local git repository whose work tree holds the
// fixture (packtest) under skills/, nothing committed yet.
func fixtureRepo(t *testing.T) (string, *git.Repository) {
	t.Helper()
	work := t.TempDir()
	packtest.Write(t, filepath.Join(work, "skills"))
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
	return work, repo
}

// TestFetch_GitDirectoryAtCommitComesOutByteIdentical: a local repository
// holding the fixture under skills/ serves each skill by commit and path,
// modes kept; a later commit does not change what the pinned one serves.
// Fetched or read from the cache, the tree keeps its files other than
// SKILL.md in the cached tar, not in memory.
func TestFetch_GitDirectoryAtCommitComesOutByteIdentical(t *testing.T) {
	work, repo := fixtureRepo(t)
	first := commitAll(t, repo, "skills")
	want := t.TempDir()
	packtest.Write(t, want)
	if err := os.WriteFile(filepath.Join(work, "skills/pdf/reference.md"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, repo, "change pdf")

	f := New(Options{CacheDir: t.TempDir(), AllowLocalGit: true})
	for _, from := range []string{"the repository", "the cache"} {
		out := t.TempDir()
		for _, s := range packtest.Skills() {
			tree, err := f.Fetch(context.Background(), contract.SkillSource{Git: &contract.GitSource{URL: "file://" + work, Commit: first, Path: "skills/" + s.Name}})
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range tree {
				if (file.Stored == nil) != (file.Path == "SKILL.md") {
					t.Fatalf("from %s: %s/%s: stored = %v, want only SKILL.md in memory", from, s.Name, file.Path, file.Stored != nil)
				}
			}
			writeTree(t, filepath.Join(out, s.Name), tree)
		}
		packtest.Equal(t, out, want)
	}
}

func TestFetch_GitRefusesUnknownCommitAndLocalURLsByDefault(t *testing.T) {
	work, repo := fixtureRepo(t)
	commit := commitAll(t, repo, "skills")
	src := contract.GitSource{URL: "file://" + work, Commit: commit, Path: "skills/pdf"}

	if _, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), contract.SkillSource{Git: &src}); err == nil || !strings.Contains(err.Error(), "only https:// and ssh://") {
		t.Fatalf("file:// fetched without AllowLocalGit: %v", err)
	}
	unknown := src
	unknown.Commit = strings.Repeat("ab", 20)
	if _, err := New(Options{CacheDir: t.TempDir(), AllowLocalGit: true}).Fetch(context.Background(), contract.SkillSource{Git: &unknown}); err == nil || !strings.Contains(err.Error(), unknown.Commit) {
		t.Fatalf("unknown commit: %v", err)
	}
	noSkill := src
	noSkill.Path = "skills/pdf/scripts"
	if _, err := New(Options{CacheDir: t.TempDir(), AllowLocalGit: true}).Fetch(context.Background(), contract.SkillSource{Git: &noSkill}); err == nil || !strings.Contains(err.Error(), "no SKILL.md") {
		t.Fatalf("directory without SKILL.md: %v", err)
	}
}

// TestFetch_GitMemoryDoesNotFollowTheRepository: a 4-byte skill in a
// repository that holds 16 MiB of incompressible data besides (64 files) is fetched
// allocating a fraction of that data, wherever it is: on another branch
// (only the pinned commit comes over: depth 1, by id), in the pinned commit
// itself outside the skill's path, or on another branch of a server that
// serves no commit by id (a full clone). The pack goes to a store on disk,
// not to memory, and only the skill's files are read from it. git's own
// server (in another process) serves the repository, so what the test
// process allocates is the fetch's alone.
func TestFetch_GitMemoryDoesNotFollowTheRepository(t *testing.T) {
	for _, layout := range []struct {
		name                  string
		sameCommit, shaInWant bool
	}{
		{name: "other branch", shaInWant: true},
		{name: "same commit", sameCommit: true, shaInWant: true},
		{name: "no commit by id", shaInWant: false},
	} {
		t.Run(layout.name, func(t *testing.T) {
			served := t.TempDir()
			work := filepath.Join(served, "skills")
			repo, err := git.PlainInit(work, false)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := repo.Config()
			if err != nil {
				t.Fatal(err)
			}
			// What GitHub and most servers allow: serving a commit by its id.
			cfg.Raw.Section("uploadpack").SetOption("allowReachableSHA1InWant", fmt.Sprint(layout.shaInWant))
			if err := repo.SetConfig(cfg); err != nil {
				t.Fatal(err)
			}
			resourcestest.WriteTree(t, work, map[string]string{"skills/tiny/SKILL.md": "---\nname: tiny\ndescription: Tiny.\n---\nTiny"})
			// 64 files of 256 KiB: go-git decodes one object at a time
			// while it indexes the pack, so memory may follow the largest
			// file but never the repository.
			const big, files = 16 << 20, 64
			writeBig := func() {
				for i := range files {
					data := make([]byte, big/files)
					if _, err := rand.Read(data); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("big-%d.bin", i)), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if layout.sameCommit {
				writeBig()
			}
			pinned := commitAll(t, repo, "tiny skill")
			if !layout.sameCommit {
				wt, err := repo.Worktree()
				if err != nil {
					t.Fatal(err)
				}
				if err := wt.Checkout(&git.CheckoutOptions{Branch: "refs/heads/big", Create: true}); err != nil {
					t.Fatal(err)
				}
				writeBig()
				commitAll(t, repo, "big data on another branch")
			}

			url := testnet.GitServer(t, served, false).URL + "/skills/.git"
			cacheDir := t.TempDir()
			f := New(Options{CacheDir: cacheDir, AllowLocalGit: true}) // AllowLocalGit: the test server is plain http
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			tree, err := f.Fetch(context.Background(), contract.SkillSource{Git: &contract.GitSource{URL: url, Commit: pinned, Path: "skills/tiny"}})
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			if file, ok := tree.File("SKILL.md"); !ok || !strings.HasSuffix(string(file.Content), "Tiny") {
				t.Fatalf("tree %+v", tree)
			}
			alloc := m1.TotalAlloc - m0.TotalAlloc
			t.Logf("fetching a 4-byte skill from a repository with %d MiB besides (%s) allocated %.2f MiB (%.3f× the data)", big>>20, layout.name, float64(alloc)/(1<<20), float64(alloc)/big)
			// A clone held in memory allocates at least the whole pack
			// (over 1×); on disk it is 0.05-0.1× on a quiet machine and
			// up to 0.33× seen under load, so half is the line.
			if alloc > big/2 {
				t.Fatalf("the fetch allocated %.1f MiB for a repository holding %d MiB besides the skill", float64(alloc)/(1<<20), big>>20)
			}
			left, err := os.ReadDir(filepath.Join(cacheDir, "git"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				if strings.HasPrefix(e.Name(), "clone-") {
					t.Errorf("the clone %s is left in the cache", e.Name())
				}
			}
		})
	}
}

// TestGitBlobReader_RefusesContentThatIsNotTheBlob: a file streamed from the
// clone's store is checked against its blob id and size as it is read.
func TestGitBlobReader_RefusesContentThatIsNotTheBlob(t *testing.T) {
	want := plumbing.ComputeHash(plumbing.BlobObject, []byte("right"))
	for _, tc := range []struct {
		content string
		size    int64
		ok      bool
	}{
		{"right", 5, true},
		{"wrong", 5, false},
		{"right!", 5, false},
		{"righ", 5, false},
	} {
		r := &gitBlobReader{r: io.NopCloser(strings.NewReader(tc.content)), hasher: plumbing.NewHasher(plumbing.BlobObject, tc.size), want: want, left: tc.size}
		_, err := io.ReadAll(r)
		if (err == nil) != tc.ok {
			t.Errorf("content %q of size %d: err = %v, want ok=%v", tc.content, tc.size, err, tc.ok)
		}
		if err != nil && !errors.Is(err, errVerification) {
			t.Errorf("content %q: %v is not a verification error", tc.content, err)
		}
	}
}

// TestFetch_GitServerSendingTooMuchFailsTheFetch: a git server that sends
// more than the fetch's budget (here 1 MiB, for a commit of 4 MiB) fails the
// fetch with a reason that says so, and leaves no clone behind, instead of
// filling the cache volume.
func TestFetch_GitServerSendingTooMuchFailsTheFetch(t *testing.T) {
	served := t.TempDir()
	work := filepath.Join(served, "skills")
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	resourcestest.WriteTree(t, work, map[string]string{"skills/big/SKILL.md": "---\nname: big\ndescription: Big.\n---\nBig", "skills/big/data.bin": string(data)})
	pinned := commitAll(t, repo, "big skill")
	url := testnet.GitServer(t, served, false).URL + "/skills/.git"

	cacheDir := t.TempDir()
	f := New(Options{CacheDir: cacheDir, AllowLocalGit: true})
	f.gitFetchBytes = 1 << 20
	_, err = f.Fetch(context.Background(), contract.SkillSource{Git: &contract.GitSource{URL: url, Commit: pinned, Path: "skills/big"}})
	if err == nil {
		t.Fatal("a fetch over its budget succeeded")
	}
	if got, want := Reason(err), "the repository sent over 1048576 bytes: pin a commit of a smaller repository"; got != want {
		t.Errorf("reason %q, want %q (error: %v)", got, want, err)
	}
	left, err := os.ReadDir(filepath.Join(cacheDir, "git"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the cache holds %v after a refused fetch", left)
	}
}

// TestFetch_GitCacheRewrittenWithItsRecordedHashIsNotServed: whoever can
// write the cache directory (the sidecar's fetch helper, loadout-fetch,
// writes it) rewrites a fetched git skill's cached tar with other content
// and records the new tar's hash beside it, as the cache recorded it
// before. The cache used to be checked against that hash alone and served
// the rewrite; it is now checked against the pinned commit by its git
// objects, so the rewrite is refetched, and what is served is the commit's.
func TestFetch_GitCacheRewrittenWithItsRecordedHashIsNotServed(t *testing.T) {
	work, repo := fixtureRepo(t)
	commit := commitAll(t, repo, "skills")
	src := contract.SkillSource{Git: &contract.GitSource{URL: "file://" + work, Commit: commit, Path: "skills/pdf"}}
	cache := t.TempDir()
	if _, err := New(Options{CacheDir: cache, AllowLocalGit: true}).Fetch(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: pdf\ndescription: Planted.\n---\nPLANTED"
	planted := skillpack.Tree{skillfile.New("SKILL.md", []byte(md), skillpack.ModeFile)}
	tarPath := sourcecache.GitTreePath(cache, *src.Git)
	var buf bytes.Buffer
	if err := skillpack.WriteTar(&buf, planted); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	if err := os.WriteFile(tarPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tarPath+".sha256", []byte(hex.EncodeToString(sum[:])), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := New(Options{CacheDir: cache, AllowLocalGit: true}).Fetch(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := tree.File("SKILL.md"); strings.Contains(string(f.Content), "PLANTED") || len(tree) == 1 {
		t.Fatalf("the rewritten cache was served: %s", f.Content)
	}
}
