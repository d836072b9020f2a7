package skilldir

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// TestDirRoot_ActivationEscapesAreRefused is the directory-root part of the
// bad-input catalog (rule R-ACT-1, R-ACT-4): a root read with LoadDirRoot,
// then activation requests that try every way out of the skill directory.
// Each is refused with an *resources.ActivationError naming the request and why, and
// no byte of the outside file is returned.
func TestDirRoot_ActivationEscapesAreRefused(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "root")
	resourcestest.WriteTree(t, base, map[string]string{
		"outside/secret.md":               "OUTSIDE SECRET",
		"root/AGENTS.md":                  "ROOT RULES",
		"root/skills/review/SKILL.md":     resourcestest.SkillMD("review", "Review code.", "REVIEW BODY"),
		"root/skills/review/checklist.md": "CHECKLIST",
		"root/skills/review-old/SKILL.md": resourcestest.SkillMD("review-old", "Old.", "OLD BODY"),
		"root/skills/review-old/old.md":   "OLD FILE",
	})
	skillDir := filepath.Join(root, "skills", "review")
	for link, target := range map[string]string{
		"escape.md":   filepath.Join(outside, "secret.md"), // absolute symlink out
		"relative.md": "../../../outside/secret.md",        // relative symlink out
		"docs":        outside,                             // symlinked directory out
		"sibling.md":  "../review-old/old.md",              // into a prefix-sharing sibling
		"loop.md":     "loop.md",                           // a symlink loop
	} {
		resourcestest.Symlink(t, target, filepath.Join(skillDir, link))
	}
	r, _, err := LoadRoot("project", root, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := resources.BuildCatalog([]resources.Root{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ request, why string }{
		{"../review-old/old.md", "path leaves the skill root"},
		{"../../AGENTS.md", "path leaves the skill root"},
		{"docs/../../../outside/secret.md", "path leaves the skill root"},
		{filepath.Join(skillDir, "checklist.md"), "absolute paths are refused"},
		{"/etc/passwd", "absolute paths are refused"},
		{`..\..\outside\secret.md`, "no backslash"},
		{"checklist.md\x00.png", "NUL byte"},
		{"%2e%2e/review-old/old.md", "no such file"}, // never decoded: a literal name
		{"..%2fAGENTS.md", "no such file"},
		{"escape.md", "outside the skill root through a symlink"},
		{"relative.md", "outside the skill root through a symlink"},
		{"docs/secret.md", "outside the skill root through a symlink"},
		{"sibling.md", "outside the skill root through a symlink"},
		{"loop.md", "resolve file"},
		{".", "does not name a file inside the skill"},
		{"missing.md", "no such file"},
	} {
		t.Run(tc.request, func(t *testing.T) {
			got, err := cat.Activate("review", []string{"checklist.md", tc.request})
			var ae *resources.ActivationError
			if !errors.As(err, &ae) {
				t.Fatalf("= %+v, %v; want an *ActivationError", got, err)
			}
			if ae.File != tc.request || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q, want one naming %q and %q", err, tc.request, tc.why)
			}
			if got != nil {
				t.Errorf("a refused activation returned %+v", got)
			}
		})
	}
	if _, err := cat.Activate("no-such-skill", nil); err == nil || !strings.Contains(err.Error(), "no such skill in the catalog") {
		t.Errorf("unknown skill: %v", err)
	}
	// The literal name is honoured, not decoded: a file really called
	// "%2e%2e" inside the skill is just a file.
	resourcestest.WriteTree(t, skillDir, map[string]string{"%2e%2e": "LITERAL"})
	got, err := cat.Activate("review", []string{"%2e%2e"})
	if err != nil || len(got.Files) != 1 || got.Files[0].Content != "LITERAL" {
		t.Errorf("literal %%2e%%2e file: %+v, %v", got, err)
	}
}

// TestDirRoot_SymlinksOutOfTheRootAreNeverRead: every path read from a
// directory root (AGENTS.md, templates, SKILL.md, the skills/ and templates/
// folders, skill files) stays inside the root, checked atomically through
// os.Root. An escaping symlink leaves that one file out with a diagnostic
// naming it; no byte of the target is returned. Links that stay inside the
// root still work.
func TestDirRoot_SymlinksOutOfTheRootAreNeverRead(t *testing.T) {
	secretDir := resourcestest.Tree(t, map[string]string{
		"passwd":               "ROOT-SECRET-PASSWD",
		"environ.md":           "ROOT-SECRET-ENV",
		"skills/evil/SKILL.md": resourcestest.SkillMD("evil", "d", "ROOT-SECRET-SKILL"),
		"templates/other.md":   "ROOT-SECRET-TEMPLATE",
		"SKILL.md":             resourcestest.SkillMD("stolen", "d", "ROOT-SECRET-SKILLMD"),
	})
	link := func(root, name, target string) {
		t.Helper()
		resourcestest.Symlink(t, target, filepath.Join(root, name))
	}
	t.Run("seed layout", func(t *testing.T) {
		root := resourcestest.Tree(t, map[string]string{
			"docs/rules.md":      "INSIDE-RULES",
			"skills/ok/SKILL.md": resourcestest.SkillMD("ok", "d", "OK-BODY"),
			"templates/fine.md":  "FINE {{x}}",
		})
		link(root, "AGENTS.md", filepath.Join(secretDir, "passwd"))
		link(root, "templates/env.md", filepath.Join(secretDir, "environ.md"))
		link(root, "templates/rel.md", "../../"+filepath.Base(secretDir)+"/environ.md")
		link(root, "skills/stolen/SKILL.md", filepath.Join(secretDir, "SKILL.md"))
		link(root, "skills/ok/inside.md", "../../docs/rules.md") // inside the root but outside the skill
		r, diags, err := LoadRoot("project", root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%+v", r); strings.Contains(got, "ROOT-SECRET") {
			t.Fatalf("root read through an escaping symlink: %s", got)
		}
		if len(r.Instructions) != 0 || len(r.Skills) != 1 || len(r.Templates) != 1 || len(r.Skills[0].Files) != 0 {
			t.Fatalf("instructions %d, skills %+v, templates %+v", len(r.Instructions), r.Skills, r.Templates)
		}
		report := fmt.Sprint(diags)
		for _, f := range []string{"AGENTS.md", "templates/env.md", "templates/rel.md", "skills/stolen/SKILL.md", "skills/ok/inside.md"} {
			if !strings.Contains(report, filepath.Join(root, f)+": ") {
				t.Errorf("no diagnostic names %s: %s", f, report)
			}
		}
		if !strings.Contains(report, "outside its root") {
			t.Errorf("diagnostics do not say why: %s", report)
		}
	})
	t.Run("symlinked folders", func(t *testing.T) {
		root := t.TempDir()
		link(root, "skills", filepath.Join(secretDir, "skills"))
		link(root, "templates", filepath.Join(secretDir, "templates"))
		r, diags, err := LoadRoot("project", root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Skills) != 0 || len(r.Templates) != 0 || len(diags) != 2 {
			t.Fatalf("skills %+v templates %+v diags %v", r.Skills, r.Templates, diags)
		}
	})
	t.Run("inside links still work", func(t *testing.T) {
		root := resourcestest.Tree(t, map[string]string{"docs/rules.md": "INSIDE-RULES"})
		link(root, "AGENTS.md", "docs/rules.md")
		r, diags, err := LoadRoot("project", root, Options{})
		if err != nil || len(diags) != 0 || len(r.Instructions) != 1 || r.Instructions[0].Body != "INSIDE-RULES" {
			t.Fatalf("%+v %v %v", r.Instructions, diags, err)
		}
	})
	t.Run("import of a skills directory", func(t *testing.T) {
		root := t.TempDir()
		link(root, "SKILL.md", filepath.Join(secretDir, "SKILL.md"))
		skills, diags, err := LoadSkills("x", root, Options{})
		if err != nil || len(skills) != 0 || len(diags) != 1 {
			t.Fatalf("skills %+v diags %v err %v", skills, diags, err)
		}
	})
}

// TestDirRoot_FIFOAndHugeFilesAreLeftOutWithoutBlocking: a named pipe (which
// would block a plain read forever) and a file larger than any context are
// reported and left out.
func TestDirRoot_FIFOAndHugeFilesAreLeftOutWithoutBlocking(t *testing.T) {
	root := resourcestest.Tree(t, map[string]string{"skills/ok/SKILL.md": resourcestest.SkillMD("ok", "d", "b")})
	if err := syscall.Mkfifo(filepath.Join(root, "AGENTS.md"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	resourcestest.WriteTree(t, root, map[string]string{"templates/big.md": strings.Repeat("x", maxRootFileBytes+1)})
	r, diags, err := LoadRoot("project", root, Options{})
	if err != nil || len(r.Instructions) != 0 || len(r.Templates) != 0 || len(r.Skills) != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	report := fmt.Sprint(diags)
	if !strings.Contains(report, "not a regular file") || !strings.Contains(report, "larger than") {
		t.Fatalf("diagnostics %s", report)
	}
}
