package hostd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// withSkills replaces skills.json and recomputes the context hash.
func withSkills(t *testing.T, data map[string]string, skills ...contract.SkillDoc) map[string]string {
	t.Helper()
	return withKey(t, data, contract.KeySkills, contract.Skills{Skills: skills})
}

// The contexts here have no registry: their system prompt ("# Instructions")
// is then all instructions, as materialize checks.
func TestReload_MaterializesEveryLoadAndKeepsTheLastGoodTree(t *testing.T) {
	out := t.TempDir()
	s, dir := loadContext(t, contextData(t, contract.Registry{}), Options{MaterializeDir: out})
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(out, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("skills/review/SKILL.md"); !strings.Contains(got, "name: review\n") || !strings.HasSuffix(got, "Project review body") {
		t.Errorf("SKILL.md = %q", got)
	}
	if got := read("AGENTS.md"); got != "# Organisation instructions\n\n# Instructions\n" {
		t.Errorf("AGENTS.md = %q", got)
	}
	if got := read("skills/review/checklist.md"); got != "- tests" {
		t.Errorf("checklist.md = %q", got)
	}

	update := withSkills(t, contextData(t, contract.Registry{}), contract.SkillDoc{Name: "deploy", Description: "Deploy", Body: "Deploy body"})
	reloadWith(t, s, dir, update)
	if got := read("skills/deploy/SKILL.md"); !strings.HasSuffix(got, "Deploy body") {
		t.Errorf("after the update SKILL.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "skills", "review")); err == nil {
		t.Error("the replaced skill is still in the tree")
	}
	served := servedHash(s)

	// A context whose skill name cannot be a directory is served all the
	// same (its policy applies), but its tree is not written: the last good
	// tree stays, /readyz answers 503 naming the skill, and nothing is
	// written outside the tree.
	hostile := withSkills(t, contextData(t, contract.Registry{}), contract.SkillDoc{Name: "../escape", Description: "x", Body: "x"})
	resourcestest.WriteConfigMapDir(t, dir, hostile)
	err := s.Reload(context.Background(), false)
	if err == nil || !strings.Contains(err.Error(), `skill "../escape"`) {
		t.Fatalf("reload error = %v, want one naming the skill", err)
	}
	if servedHash(s) == served {
		t.Error("the new context's policy waits on its tree")
	}
	if got := read("skills/deploy/SKILL.md"); !strings.HasSuffix(got, "Deploy body") {
		t.Errorf("the last good tree changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "escape")); err == nil {
		t.Error("a file was written outside the tree")
	}
	rec := serve(s, "GET", "/readyz", "")
	if body := rec.Body.String(); rec.Code != 503 || !strings.Contains(body, "escape") {
		t.Errorf("/readyz = %d %s, want 503 naming the skill", rec.Code, body)
	}
}
