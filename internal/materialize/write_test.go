package materialize

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

func mustBuild(t *testing.T, in Input, opts Options) *Tree {
	t.Helper()
	tree, err := Build(context.Background(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func mustWrite(t *testing.T, out string, tree *Tree) Result {
	t.Helper()
	res, err := Write(out, tree)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func generations(t *testing.T, out string) []string {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var gens []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), generationPrefix) {
			gens = append(gens, e.Name())
		}
	}
	return gens
}

func TestWrite_TreeReadableThroughTopLevelLinks(t *testing.T) {
	out := t.TempDir()
	tree := mustBuild(t, sampleInput(), Options{})
	mustWrite(t, out, tree)
	for _, f := range tree.Files() {
		b, err := os.ReadFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(f.Content) {
			t.Errorf("%s: got %q, want %q", f.Path, b, f.Content)
		}
		fi, err := os.Stat(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != fs.FileMode(f.Mode) {
			t.Errorf("%s: mode %v, want %v", f.Path, fi.Mode().Perm(), f.Mode)
		}
	}
	for _, name := range []string{SkillsDir, PromptsDir, AgentsFile, SystemPromptFile} {
		target, err := os.Readlink(filepath.Join(out, name))
		if err != nil || target != filepath.Join(DataLink, name) {
			t.Errorf("%s -> %q (%v), want a relative link through %s", name, target, err, DataLink)
		}
	}
}

func TestWrite_SameTreeWritesNothing(t *testing.T) {
	out := t.TempDir()
	first := mustWrite(t, out, mustBuild(t, sampleInput(), Options{}))
	before, err := os.Lstat(filepath.Join(out, DataLink))
	if err != nil {
		t.Fatal(err)
	}
	again := mustWrite(t, out, mustBuild(t, sampleInput(), Options{}))
	if again.Changed || again.Generation != first.Generation {
		t.Errorf("second write of the same tree: %+v, want unchanged %s", again, first.Generation)
	}
	after, _ := os.Lstat(filepath.Join(out, DataLink))
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("the data link was rewritten")
	}
}

func TestWrite_SameTreeSameBytesInTwoDirectories(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	mustWrite(t, a, mustBuild(t, sampleInput(), Options{}))
	mustWrite(t, b, mustBuild(t, sampleInput(), Options{}))
	walk := func(dir string) map[string]string {
		m := map[string]string{}
		realPath, _ := filepath.EvalSymlinks(filepath.Join(dir, DataLink))
		_ = filepath.WalkDir(realPath, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				c, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(realPath, p)
				m[rel] = string(c)
			}
			return err
		})
		return m
	}
	ma, mb := walk(a), walk(b)
	if fmt.Sprint(ma) != fmt.Sprint(mb) || len(ma) == 0 {
		t.Errorf("two writes of the same context differ:\n%v\n%v", ma, mb)
	}
}

func TestWrite_KeepsCurrentAndPreviousGenerationOnly(t *testing.T) {
	out := t.TempDir()
	var last, previous Result
	for i := range 4 {
		in := sampleInput()
		in.SystemPrompt = fmt.Sprintf("prompt %d\n", i)
		previous = last
		last = mustWrite(t, out, mustBuild(t, in, Options{}))
	}
	gens := generations(t, out)
	if len(gens) != 2 || !strings.Contains(strings.Join(gens, " "), last.Generation) || !strings.Contains(strings.Join(gens, " "), previous.Generation) {
		t.Errorf("generations = %v, want only %s and %s", gens, last.Generation, previous.Generation)
	}
	b, _ := os.ReadFile(filepath.Join(out, SystemPromptFile))
	if string(b) != "prompt 3\n" {
		t.Errorf("system-prompt.md = %q, want the last write", b)
	}
}

// TestWrite_ReaderNeverSeesAMix swaps between two contexts while readers
// read whole trees: a reader that resolves the data link once must see every
// file of one generation, never files of both.
func TestWrite_ReaderNeverSeesAMix(t *testing.T) {
	out := t.TempDir()
	trees := make([]*Tree, 2)
	for i := range trees {
		in := Input{SystemPrompt: fmt.Sprintf("gen %d", i), Instructions: []Instruction{{Body: fmt.Sprintf("gen %d", i)}}}
		for s := range 20 {
			in.Skills = append(in.Skills, contract.SkillDoc{Name: fmt.Sprintf("skill-%d", s), Description: "d", Body: fmt.Sprintf("gen %d", i),
				Files: []contract.FileDoc{{Path: "ref.md", Content: fmt.Sprintf("gen %d", i)}}})
		}
		trees[i] = mustBuild(t, in, Options{})
	}
	mustWrite(t, out, trees[0])

	stop := make(chan struct{})
	var reads, mixes atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				gen, err := filepath.EvalSymlinks(filepath.Join(out, DataLink))
				if err != nil {
					continue
				}
				seen := map[string]bool{}
				complete := true
				for _, f := range trees[0].Files() {
					b, err := os.ReadFile(filepath.Join(gen, f.Path))
					if errors.Is(err, fs.ErrNotExist) {
						// Collected after two more swaps: a failed read, never a mix.
						complete = false
						break
					}
					if err != nil {
						t.Error(err)
						return
					}
					g0, g1 := strings.Contains(string(b), "gen 0"), strings.Contains(string(b), "gen 1")
					if g0 || g1 { // manifest.json carries no generation marker
						seen[fmt.Sprint(g0, g1)] = true
					}
				}
				if complete {
					reads.Add(1)
					if len(seen) != 1 {
						mixes.Add(1)
					}
				}
			}
		}()
	}
	deadline := time.Now().Add(time.Second)
	for i := 1; time.Now().Before(deadline); i++ {
		mustWrite(t, out, trees[i%2])
	}
	close(stop)
	wg.Wait()
	if mixes.Load() != 0 {
		t.Errorf("%d of %d reads saw files of two generations", mixes.Load(), reads.Load())
	}
	if reads.Load() == 0 {
		t.Error("no complete read happened")
	}
}

func TestWrite_LeavesEntriesItDoesNotOwnAlone(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "settings.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "projects", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		in := sampleInput()
		in.SystemPrompt = fmt.Sprint(i)
		mustWrite(t, out, mustBuild(t, in, Options{}))
	}
	if b, err := os.ReadFile(filepath.Join(out, "settings.json")); err != nil || string(b) != "{}" {
		t.Errorf("settings.json = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "projects", "p")); err != nil {
		t.Error(err)
	}
}

func TestWrite_RefusesToReplaceAForeignTopLevelEntry(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, SkillsDir, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Write(out, mustBuild(t, sampleInput(), Options{}))
	if err == nil || !strings.Contains(err.Error(), "skills exists and is not the link") {
		t.Fatalf("error = %v, want one naming skills", err)
	}
	if _, err := os.Stat(filepath.Join(out, SkillsDir, "mine")); err != nil {
		t.Error("the foreign skills directory was touched:", err)
	}
}

func TestWrite_NeverWritesOutsideOut(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// Links planted in OUT that point outside: a stale temporary data link, a
	// "generation" that the collector would remove, and a data link.
	for _, name := range []string{dataLinkTmp, generationPrefix + "0000000000000000-evil", DataLink} {
		resourcestest.Symlink(t, outside, filepath.Join(out, name))
	}
	mustWrite(t, out, mustBuild(t, sampleInput(), Options{}))
	mustWrite(t, out, mustBuild(t, Input{SystemPrompt: "other"}, Options{}))
	mustWrite(t, out, mustBuild(t, Input{SystemPrompt: "third"}, Options{}))
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "keep" {
		t.Errorf("outside dir holds %v, want only keep", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(out, SystemPromptFile)); string(b) != "third" {
		t.Errorf("system-prompt.md = %q", b)
	}

	// A top-level link that points outside is not followed either: it is
	// replaced by materialize's own link.
	out2 := t.TempDir()
	resourcestest.Symlink(t, outside, filepath.Join(out2, SkillsDir))
	mustWrite(t, out2, mustBuild(t, sampleInput(), Options{}))
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside dir holds %v, want only keep", entries)
	}
	if got, _ := os.Readlink(filepath.Join(out2, SkillsDir)); got != linkTarget(SkillsDir) {
		t.Errorf("skills -> %q, want materialize's link", got)
	}
}

// In the Claude Code layout OUT is the agent's ~/.claude: the agent can
// plant anything under Write's own names. Each tampering here used to make
// every later Write fail; Write now removes what stands on its names
// (never following it), replaces foreign links, and the tree it writes is
// current afterwards. What it cannot fix without deleting someone's files
// (a real directory on a top-level name) it names in its error, after
// bringing every other name up to date.
func TestWrite_RecoversFromTamperingWithItsOwnNames(t *testing.T) {
	outside := t.TempDir()
	for name, tamper := range map[string]func(out string) error{
		"a directory at the temporary data link": func(out string) error {
			return os.MkdirAll(filepath.Join(out, dataLinkTmp, "x"), 0o755)
		},
		"a file at the temporary data link": func(out string) error {
			return os.WriteFile(filepath.Join(out, dataLinkTmp), []byte("x"), 0o644)
		},
		"the data link replaced by a directory": func(out string) error {
			if err := os.Remove(filepath.Join(out, DataLink)); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(out, DataLink, "skills", "evil"), 0o755)
		},
		"the data link pointed outside": func(out string) error {
			if err := os.Remove(filepath.Join(out, DataLink)); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(out, DataLink))
		},
		"the skills link replaced by a link outside": func(out string) error {
			if err := os.Remove(filepath.Join(out, SkillsDir)); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(out, SkillsDir))
		},
		"the skills link removed": func(out string) error { return os.Remove(filepath.Join(out, SkillsDir)) },
		"a stale link temporary": func(out string) error {
			return os.MkdirAll(filepath.Join(out, linkTmpPrefix+SkillsDir, "x"), 0o755)
		},
	} {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			mustWrite(t, out, mustBuild(t, sampleInput(), Options{}))
			if err := tamper(out); err != nil {
				t.Fatal(err)
			}
			in := sampleInput()
			in.SystemPrompt = "after " + name
			mustWrite(t, out, mustBuild(t, in, Options{}))
			if b, err := os.ReadFile(filepath.Join(out, SystemPromptFile)); err != nil || string(b) != in.SystemPrompt {
				t.Errorf("system-prompt.md = %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(out, SkillsDir, "review", SkillFile)); err != nil {
				t.Errorf("skills not served through the link: %v", err)
			}
			if res := mustWrite(t, out, mustBuild(t, in, Options{})); res.Changed {
				t.Error("the recovered tree is not current: a third write changed it")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("Write followed a planted link: outside holds %v", entries)
			}
		})
	}

	// A real directory on a top-level name is someone's files: kept, named,
	// and every other name still moves to the new tree.
	out := t.TempDir()
	mustWrite(t, out, mustBuild(t, sampleInput(), Options{}))
	if err := os.Remove(filepath.Join(out, SkillsDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, SkillsDir, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := sampleInput()
	in.SystemPrompt = "new"
	if _, err := Write(out, mustBuild(t, in, Options{})); err == nil || !strings.Contains(err.Error(), "skills exists and is not the link") {
		t.Fatalf("error = %v, want one naming skills", err)
	}
	if _, err := os.Stat(filepath.Join(out, SkillsDir, "mine")); err != nil {
		t.Error("the directory on skills was touched:", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, SystemPromptFile)); string(b) != "new" {
		t.Errorf("system-prompt.md = %q: the other names did not move on", b)
	}
}

func TestWrite_ClaudeCodeLayoutServesSkillsAndMemory(t *testing.T) {
	// With OUT at ~/.claude, Claude Code reads ~/.claude/skills/<name>/SKILL.md
	// and ~/.claude/CLAUDE.md.
	home := t.TempDir()
	out := filepath.Join(home, ".claude")
	mustWrite(t, out, mustBuild(t, sampleInput(), Options{ClaudeCode: true}))
	memory, err := os.ReadFile(filepath.Join(home, ".claude", "CLAUDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(memory), "# Organisation instructions\n\nUse Go 1.26.") {
		t.Errorf("CLAUDE.md = %q, want the instructions", memory)
	}
	if _, err := os.ReadFile(filepath.Join(home, ".claude", "commands", "hello.md")); err != nil {
		t.Errorf("~/.claude/commands/hello.md: %v", err)
	}
	skill, err := os.ReadFile(filepath.Join(home, ".claude", "skills", "review", "SKILL.md"))
	if err != nil || !strings.HasPrefix(string(skill), "---\nname: review\n") {
		t.Errorf("~/.claude/skills/review/SKILL.md = %q, %v", skill, err)
	}
	// Without the option there is no CLAUDE.md.
	plain := t.TempDir()
	mustWrite(t, plain, mustBuild(t, sampleInput(), Options{}))
	if _, err := os.Lstat(filepath.Join(plain, ClaudeFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CLAUDE.md without the Claude Code layout: %v", err)
	}
}
