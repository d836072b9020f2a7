package skilldir

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// dirCatalog builds a catalog from a directory root with skill review.
func dirCatalog(t *testing.T) (*resources.Catalog, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "review")
	resourcestest.WriteTree(t, base, map[string]string{
		"review/skills/review/SKILL.md":     resourcestest.SkillMD("review", "d", "DIR-BODY"),
		"review/skills/review/checklist.md": "CHECK",
		"review-old/secret.md":              "SECRET",
	})
	root, _, err := LoadRoot("proj", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := resources.BuildCatalog([]resources.Root{root})
	if err != nil {
		t.Fatal(err)
	}
	return cat, filepath.Join(dir, "skills", "review")
}

func TestActivation_DirectorySourceIsCanonicalPath(t *testing.T) { // R-ACT-3
	cat, skillDir := dirCatalog(t)
	a, err := cat.Activate("review", []string{"checklist.md"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(skillDir, "checklist.md"))
	if a.Body != "DIR-BODY" || a.Files[0].Source != want || a.Files[0].Request != "checklist.md" {
		t.Fatalf("activated = %+v, want source %s", a, want)
	}
}

func TestActivation_DirectoryRefusesTraversalPrefixSiblingAndSymlinkEscape(t *testing.T) { // R-ACT-4
	cat, skillDir := dirCatalog(t)
	// A sibling whose name shares the prefix: /x/review-old is not in /x/review.
	resourcestest.Symlink(t, filepath.Join(skillDir, "..", "..", "..", "review-old", "secret.md"), filepath.Join(skillDir, "escape.md"))
	resourcestest.Symlink(t, "checklist.md", filepath.Join(skillDir, "alias.md"))
	for _, req := range []string{"../../../review-old/secret.md", filepath.Join(skillDir, "checklist.md"), "escape.md"} {
		_, err := cat.Activate("review", []string{req})
		var ae *resources.ActivationError
		if !errors.As(err, &ae) {
			t.Errorf("request %q: err = %v, want refusal", req, err)
		}
	}
	if _, err := cat.Activate("review", []string{"alias.md"}); err != nil {
		t.Errorf("a symlink staying inside the skill is allowed: %v", err)
	}
}

func TestActivation_StaleCatalogIsRefused(t *testing.T) { // R-ACT-2
	cat, skillDir := dirCatalog(t)
	resourcestest.WriteTree(t, skillDir, map[string]string{"SKILL.md": resourcestest.SkillMD("renamed", "d", "b")})
	_, err := cat.Activate("review", nil)
	var ae *resources.ActivationError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want a stale-catalog refusal", err)
	}
	resourcestest.MustContain(t, "error", err.Error(), "stale", "renamed")
}

func TestContainment_LexicalIsNotAStringPrefixTest(t *testing.T) { // R-ACT-4 (a)
	cases := map[[2]string]bool{
		{"/srv/review", "/srv/review/a.md"}:     true,
		{"/srv/review", "/srv/review"}:          true,
		{"/srv/review", "/srv/review-old/a.md"}: false,
		{"/srv/review", "/srv/a.md"}:            false,
		{"/srv/review", "/srv/review/..x"}:      true,
	}
	for c, want := range cases {
		if got := within(c[0], c[1]); got != want {
			t.Errorf("within(%q, %q) = %v, want %v", c[0], c[1], got, want)
		}
	}
}
