package sources

import (
	"context"
	"os"
	"path/filepath"
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
	out := t.TempDir()
	for _, s := range packtest.Skills() {
		tree, err := f.Fetch(context.Background(), contract.SkillSource{Git: &contract.GitSource{URL: "file://" + work, Commit: first, Path: "skills/" + s.Name}})
		if err != nil {
			t.Fatal(err)
		}
		writeTree(t, filepath.Join(out, s.Name), tree)
	}
	packtest.Equal(t, out, want)
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
