package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMaterialize_SamplesWinnersOnlyThenUnchanged(t *testing.T) {
	dir, out := mountSamples(t), filepath.Join(t.TempDir(), "tree")
	stdout, _, err := run(t, "materialize", "--context-dir", dir, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "materialized context sha256:") {
		t.Errorf("stdout = %q", stdout)
	}
	skill, err := os.ReadFile(filepath.Join(out, "skills", "review", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	// team-a's review skill wins; the platform's is shadowed and absent.
	if !strings.Contains(string(skill), "PROJECT-REVIEW-BODY") || strings.Contains(string(skill), "PLATFORM-REVIEW-BODY") {
		t.Errorf("SKILL.md = %q", skill)
	}
	prompt, err := os.ReadFile(filepath.Join(out, "prompts", "review.md"))
	if err != nil || !strings.Contains(string(prompt), "argument-hint: <file> <owner>\n") {
		t.Errorf("prompts/review.md = %q, %v", prompt, err)
	}
	agents, err := os.ReadFile(filepath.Join(out, "AGENTS.md"))
	if want := "You work on team-a's parser and runtime. Run `make test` before you\nsay a change is done.\n"; err != nil || string(agents) != want {
		t.Errorf("AGENTS.md = %q, %v; want the Workspace's instructions %q", agents, err, want)
	}
	stdout, _, err = run(t, "materialize", "--context-dir", dir, "--out", out)
	if err != nil || !strings.HasPrefix(stdout, "already current: context sha256:") {
		t.Errorf("second run: %q, %v", stdout, err)
	}
}

func TestMaterialize_RequiresOut(t *testing.T) {
	if _, _, err := run(t, "materialize", "--context-dir", mountSamples(t)); err == nil || !strings.Contains(err.Error(), "out") {
		t.Errorf("err = %v, want one naming --out", err)
	}
}

// Codex creates CODEX_HOME/skills/.system on its first run; materialize
// --codex into CODEX_HOME then shares skills/ with it instead of failing.
func TestMaterialize_CodexIntoACodexHomeWithSystemSkills(t *testing.T) {
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		"skills/.system/imagegen/SKILL.md": "---\nname: imagegen\ndescription: d\n---\n",
		"config.toml":                      "model = \"o3\"\n",
	})
	if _, stderr, err := run(t, "materialize", "--codex", "--context-dir", mountSamples(t), "--out", home); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, f := range []string{"skills/.system/imagegen/SKILL.md", "skills/review/SKILL.md", "AGENTS.md", "hooks.json", "requirements.toml"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Error(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != "model = \"o3\"\n" {
		t.Errorf("Codex's config.toml changed: %q", b)
	}
}
