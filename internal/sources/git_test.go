package sources

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
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

// TestFetch_GitDirectoryAtCommitComesOutByteIdentical: a local repository
// holding the fixture under skills/ serves each skill by commit and path,
// modes kept; a later commit does not change what the pinned one serves.
// Fetched or read from the cache, the tree keeps its files other than
// SKILL.md in the cached tar, not in memory.
func TestFetch_GitDirectoryAtCommitComesOutByteIdentical(t *testing.T) {
	work := t.TempDir()
	packtest.Write(t, filepath.Join(work, "skills"))
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
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
	work := t.TempDir()
	packtest.Write(t, filepath.Join(work, "skills"))
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
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

// TestFetch_GitFetchesOnlyThePinnedCommit: a 4-byte skill in a repository
// whose other branch holds 16 MiB of incompressible data is fetched without
// that data: only the pinned commit and its tree come over (depth 1, by id),
// so the fetch allocates a small fraction of the repository.
func TestFetch_GitFetchesOnlyThePinnedCommit(t *testing.T) {
	work := t.TempDir()
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := repo.Config()
	if err != nil {
		t.Fatal(err)
	}
	// What GitHub and most servers allow: serving a commit by its id.
	cfg.Raw.Section("uploadpack").SetOption("allowReachableSHA1InWant", "true")
	if err := repo.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(work, "skills", "tiny")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: tiny\ndescription: Tiny.\n---\nTiny"), 0o644); err != nil {
		t.Fatal(err)
	}
	pinned := commitAll(t, repo, "tiny skill")
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Branch: "refs/heads/big", Create: true}); err != nil {
		t.Fatal(err)
	}
	const big = 16 << 20
	data := make([]byte, big)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	commitAll(t, repo, "big data on another branch")

	f := New(Options{CacheDir: t.TempDir(), AllowLocalGit: true})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	tree, err := f.Fetch(context.Background(), contract.SkillSource{Git: &contract.GitSource{URL: "file://" + work, Commit: pinned, Path: "skills/tiny"}})
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if file, ok := tree.File("SKILL.md"); !ok || !strings.HasSuffix(string(file.Content), "Tiny") {
		t.Fatalf("tree %+v", tree)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("fetching a 4-byte skill from a repository with %d MiB on another branch allocated %.2f MiB (%.3f× the other branch)", big>>20, float64(alloc)/(1<<20), float64(alloc)/big)
	if alloc > big/4 {
		t.Fatalf("the fetch allocated %.1f MiB: more than the pinned commit (the other branch is %d MiB)", float64(alloc)/(1<<20), big>>20)
	}
}
