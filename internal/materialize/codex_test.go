package materialize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// Codex creates CODEX_HOME/skills/.system itself; with the tree written into
// CODEX_HOME both kinds of skills sit side by side, and nothing of Codex's
// or the user's is touched when the Workspace's skills change.
func TestWrite_CodexLayoutSharesSkillsWithCodex_RAG1(t *testing.T) {
	home := t.TempDir()
	codexSkill := filepath.Join(home, "skills", ".system", "imagegen", "SKILL.md")
	userSkill := filepath.Join(home, "skills", "mine", "SKILL.md")
	for _, f := range []string{codexSkill, userSkill} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("---\nname: x\ndescription: y\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	mustWrite(t, home, mustBuild(t, sampleInput(), Options{Codex: true}))
	for _, name := range []string{"review", "deploy"} {
		b, err := os.ReadFile(filepath.Join(home, "skills", name, "SKILL.md"))
		if err != nil || !strings.Contains(string(b), "name: "+name) {
			t.Fatalf("skills/%s/SKILL.md: %q, %v", name, b, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "skills", "review", "refs", "style.md")); err != nil || string(b) != "no globals" {
		t.Fatalf("a skill's file: %q, %v", b, err)
	}
	for _, name := range []string{AgentsFile, CodexHooksFile, CodexRequirementsFile} {
		if target, err := os.Readlink(filepath.Join(home, name)); err != nil || target != filepath.Join(DataLink, name) {
			t.Errorf("%s -> %q (%v), want a link through %s", name, target, err, DataLink)
		}
	}
	hooks, err := os.ReadFile(filepath.Join(home, CodexHooksFile))
	if err != nil || !strings.Contains(string(hooks), CodexHookCommand) {
		t.Fatalf("hooks.json: %s, %v", hooks, err)
	}
	requirements, err := os.ReadFile(filepath.Join(home, CodexRequirementsFile))
	if err != nil {
		t.Fatal(err)
	}
	// Every event Codex can hook reaches hostd, in both files: PreCompact
	// (BeforeCompact) and SessionEnd included.
	var parsed struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(hooks, &parsed); err != nil {
		t.Fatalf("hooks.json is not JSON: %v\n%s", err, hooks)
	}
	for _, event := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd"} {
		if h := parsed.Hooks[event]; len(h) != 1 || len(h[0].Hooks) != 1 || h[0].Hooks[0].Command != CodexHookCommand {
			t.Errorf("hooks.json does not run %q at %s: %s", CodexHookCommand, event, hooks)
		}
		if !strings.Contains(string(hooks), `"`+event+`"`) || !strings.Contains(string(requirements), "[[hooks."+event+".hooks]]") {
			t.Errorf("%s is not hooked: hooks.json %s\nrequirements.toml %s", event, hooks, requirements)
		}
	}

	// The Workspace drops deploy: its link goes, everything else stays.
	in := sampleInput()
	in.Skills = in.Skills[:1]
	mustWrite(t, home, mustBuild(t, in, Options{Codex: true}))
	if _, err := os.Lstat(filepath.Join(home, "skills", "deploy")); !os.IsNotExist(err) {
		t.Errorf("the link of a dropped skill is still there: %v", err)
	}
	for _, f := range []string{codexSkill, userSkill, filepath.Join(home, "skills", "review", "SKILL.md")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A Workspace skill whose name the user's own skill (a directory or a link)
// already has is not linked and the error names it; the other skills are.
func TestWrite_CodexLayoutNeverReplacesAUserSkill_RAG1(t *testing.T) {
	home := t.TempDir()
	mine := filepath.Join(home, "skills", "deploy", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(home, mustBuild(t, sampleInput(), Options{Codex: true}))
	if err == nil || !strings.Contains(err.Error(), "skills/deploy") {
		t.Fatalf("err = %v, want one naming skills/deploy", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine" {
		t.Fatalf("the user's skill changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(home, "skills", "review", "SKILL.md")); err != nil {
		t.Fatal(err)
	}

	// The user's own skill may also be a link to their directory: it is
	// theirs, kept through every write.
	if err := os.RemoveAll(filepath.Dir(mine)); err != nil {
		t.Fatal(err)
	}
	theirs := t.TempDir()
	resourcestest.Symlink(t, theirs, filepath.Join(home, "skills", "deploy"))
	_, err = Write(home, mustBuild(t, sampleInput(), Options{Codex: true}))
	if err == nil || !strings.Contains(err.Error(), "skills/deploy is a link to "+theirs) {
		t.Fatalf("err = %v, want one naming the user's link", err)
	}
	if target, _ := os.Readlink(filepath.Join(home, "skills", "deploy")); target != theirs {
		t.Fatalf("the user's link now points at %q", target)
	}
}

// A tree written without --codex into CODEX_HOME made skills a link; the
// Codex layout turns it into the shared directory.
func TestWrite_CodexLayoutReplacesItsOwnSkillsLink(t *testing.T) {
	home := t.TempDir()
	mustWrite(t, home, mustBuild(t, sampleInput(), Options{}))
	mustWrite(t, home, mustBuild(t, sampleInput(), Options{Codex: true}))
	fi, err := os.Lstat(filepath.Join(home, "skills"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("skills: %v, %v; want a directory", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(home, "skills", "review")); err != nil || target != skillLinkTarget("review") {
		t.Fatalf("skills/review -> %q, %v", target, err)
	}
	if res := mustWrite(t, home, mustBuild(t, sampleInput(), Options{Codex: true})); res.Changed {
		t.Fatal("a current Codex tree was written again")
	}
}

// Codex gets no system prompt from Loadout, so its AGENTS.md (its global
// instructions) carries what Claude Code's CLAUDE.md does: the platform's
// text only. The tenant's text is project content, in project-prompt.md.
func TestBuild_CodexAgentsFileIsThePlatformMemory(t *testing.T) {
	in := sampleInput()
	in.Manifest.ActiveSkills = []contract.ActiveSkill{{Name: "review", Files: []string{"checklist.md"}}}
	in.Manifest.PromptGuides = []contract.PromptGuide{{Extension: "review-extension", Text: "Use review_note for findings.\n"}}
	tree := files(t, mustBuild(t, in, Options{Codex: true}))
	codex := tree[AgentsFile]
	claude := files(t, mustBuild(t, in, Options{ClaudeCode: true}))[ClaudeFile]
	if codex != "# Organisation instructions\n\nUse Go 1.26.\n" {
		t.Errorf("AGENTS.md = %q, want the platform's instruction alone", codex)
	}
	for _, want := range []string{"Run make test before you land.", "### Active skill: review\n\n# Review\n\nRead the diff.", "#### review: checklist.md\n\n- [ ] tests", "Use review_note for findings."} {
		if !strings.Contains(tree[ProjectPromptFile], want) {
			t.Errorf("project-prompt.md lacks %q:\n%s", want, tree[ProjectPromptFile])
		}
	}
	if codex != claude {
		t.Errorf("AGENTS.md =\n%s\nCLAUDE.md =\n%s", codex, claude)
	}
	if both := files(t, mustBuild(t, in, Options{Codex: true, ClaudeCode: true})); both[AgentsFile] != both[ClaudeFile] {
		t.Error("with both layouts AGENTS.md and CLAUDE.md differ")
	}
	if plain := files(t, mustBuild(t, in, Options{}))[AgentsFile]; plain != codex {
		t.Errorf("AGENTS.md without --codex = %q", plain)
	}
	in.Manifest.ActiveSkills = []contract.ActiveSkill{{Name: "nope"}}
	if _, err := Build(context.Background(), in, Options{Codex: true}); err == nil || !strings.Contains(err.Error(), `skill "nope" is not among the skills`) {
		t.Errorf("an unknown active skill: %v", err)
	}
}
