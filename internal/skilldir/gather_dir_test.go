package skilldir

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

func TestDirRoot_MissingSourcesAreEmpty(t *testing.T) { // R-CAT-5
	root, diags, err := LoadRoot("empty", t.TempDir(), Options{})
	if err != nil || len(diags) != 0 {
		t.Fatalf("err = %v, diags = %v", err, diags)
	}
	if len(root.Skills)+len(root.Templates)+len(root.Instructions) != 0 {
		t.Fatalf("root = %+v, want empty", root)
	}
}

func TestDirRoot_OtherIOErrorsAreErrors(t *testing.T) { // R-CAT-5
	dir := t.TempDir()
	// skills is a file, not a directory: reading it fails with something
	// other than "does not exist".
	resourcestest.WriteTree(t, dir, map[string]string{"skills": "not a directory"})
	if _, _, err := LoadRoot("r", dir, Options{}); err == nil {
		t.Fatal("want an error for an unreadable skills directory")
	}
	if _, _, err := LoadRoot("r", filepath.Join(dir, "missing-root"), Options{}); err == nil {
		t.Fatal("want an error for a missing root directory")
	}
}

func TestDirRoot_ReadsSeedLayout(t *testing.T) { // R-SK-1, R-SK-3
	dir := resourcestest.Tree(t, map[string]string{
		"AGENTS.md": "Project rules.",
		"skills/review/SKILL.md": "---\nname: review\ndescription: Review code.\nlicense: MIT\ncompatibility: any\n" +
			"metadata:\n  owner: team-a\nallowed-tools: Read Grep\nunknown-field: ignored\n---\nBODY\n",
		"skills/review/checklist.md":  "CHECK",
		"skills/review/other.md":      "not a skill",
		"skills/review/refs/deep.txt": "DEEP",
		"templates/fix.md":            "---\ndescription: Fix it.\n---\nFix {{file}}.\n",
		"templates/plain.md":          "Just {{x}}.\n",
	})
	root, diags, err := LoadRoot("proj", dir, Options{Strict: true})
	if err != nil || len(diags) != 1 || diags[0].Severity != resources.SeverityWarning || !strings.Contains(diags[0].Message, `unknown frontmatter field "unknown-field"`) {
		t.Fatalf("err = %v, diags = %v, want one warning about unknown-field", err, diags)
	}
	if len(root.Skills) != 1 {
		t.Fatalf("skills = %+v, want only review (other.md is a file, R-SK-3)", root.Skills)
	}
	s := root.Skills[0]
	if s.Name != "review" || s.Body != "BODY" || s.License != "MIT" || s.Compatibility != "any" ||
		s.Metadata["owner"] != "team-a" || strings.Join(s.AllowedTools, ",") != "Read,Grep" || s.Origin.String() != "proj:skills/review/SKILL.md" {
		t.Fatalf("skill = %+v", s)
	}
	var paths []string
	for _, f := range s.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, ","); got != "checklist.md,other.md,refs/deep.txt" {
		t.Fatalf("files = %s", got)
	}
	if len(root.Templates) != 2 || root.Templates[0].Name != "fix" || root.Templates[0].Description != "Fix it." ||
		root.Templates[0].Body != "Fix {{file}}." || root.Templates[1].Body != "Just {{x}}." {
		t.Fatalf("templates = %+v", root.Templates)
	}
	if len(root.Instructions) != 1 || root.Instructions[0].Origin.String() != "proj:AGENTS.md" {
		t.Fatalf("instructions = %+v", root.Instructions)
	}
}

func TestDirRoot_BadSkillsAreSkippedWithDiagnosticNamingTheFile(t *testing.T) { // R-SK-2
	dir := resourcestest.Tree(t, map[string]string{
		"skills/nofm/SKILL.md":    "no frontmatter here\n",
		"skills/badyaml/SKILL.md": "---\nname: [unclosed\n---\nbody\n",
		"skills/blank/SKILL.md":   "---\nname: blank\ndescription: \"  \"\n---\nbody\n",
		"skills/good/SKILL.md":    resourcestest.SkillMD("good", "Good.", "ok"),
	})
	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Skills) != 1 || root.Skills[0].Name != "good" {
		t.Fatalf("skills = %+v, want only good", root.Skills)
	}
	for _, name := range []string{"nofm", "badyaml", "blank"} {
		want := filepath.Join(dir, "skills", name, "SKILL.md")
		found := false
		for _, d := range diags {
			found = found || (d.File == want && d.Severity == resources.SeveritySkipped)
		}
		if !found {
			t.Errorf("no skipped diagnostic naming %s in %v", want, diags)
		}
	}
}

func TestDirRoot_BadNameWarnsWhenLenientFailsWhenStrict(t *testing.T) { // R-SK-2
	dir := resourcestest.Tree(t, map[string]string{
		"skills/review/SKILL.md": resourcestest.SkillMD("Review_Tool", "Bad name.", "b"),
		"skills/other/SKILL.md":  resourcestest.SkillMD("not-other", "Differs from dir.", "b"),
	})
	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil || len(root.Skills) != 2 || len(diags) != 2 || diags[0].Severity != resources.SeverityWarning {
		t.Fatalf("lenient: err = %v, skills = %d, diags = %v", err, len(root.Skills), diags)
	}
	if _, err := resources.BuildCatalog([]resources.Root{root}); err != nil {
		t.Fatalf("a lenient root resolves: %v", err)
	}
	root, diags, err = LoadRoot("r", dir, Options{Strict: true})
	var inv *resources.InvalidResourceError
	if !errors.As(err, &inv) || inv.Field != "name" {
		t.Fatalf("strict: err = %v, want *resources.InvalidResourceError on name", err)
	}
	if len(root.Skills) != 0 || len(diags) != 2 || diags[0].Severity != resources.SeverityError {
		t.Fatalf("strict: skills = %+v, diags = %v", root.Skills, diags)
	}
}

func TestDirRoot_SymlinkLeavingSkillIsLeftOut(t *testing.T) { // R-ACT-4 (b) at discovery
	dir := resourcestest.Tree(t, map[string]string{"skills/review/SKILL.md": resourcestest.SkillMD("review", "d", "b")})
	outside := filepath.Join(resourcestest.Tree(t, map[string]string{"secret.txt": "SECRET"}), "secret.txt")
	resourcestest.Symlink(t, outside, filepath.Join(dir, "skills/review/leak.txt"))
	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Skills[0].Files) != 0 || len(diags) != 1 || diags[0].Severity != resources.SeverityWarning {
		t.Fatalf("files = %+v, diags = %v", root.Skills[0].Files, diags)
	}
}

func TestLoadSkillsDir_SingleSkillDirectory(t *testing.T) { // R-SK-3
	dir := filepath.Join(t.TempDir(), "review")
	resourcestest.WriteTree(t, dir, map[string]string{"SKILL.md": resourcestest.SkillMD("review", "d", "b"), "notes.md": "n"})
	skills, diags, err := LoadSkills("import", dir, Options{Strict: true})
	if err != nil || len(diags) != 0 || len(skills) != 1 || len(skills[0].Files) != 1 {
		t.Fatalf("skills = %+v, diags = %v, err = %v", skills, diags, err)
	}
}

// TestDirRoot_ConcurrentReadIsInDirectoryOrder: skill directories are read
// concurrently, yet skills, diagnostics and the strict error come out in
// directory order, the same on every run.
func TestDirRoot_ConcurrentReadIsInDirectoryOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var wantSkills, wantDiagFiles []string
	for i := range 40 {
		name := fmt.Sprintf("s%02d", i)
		switch i % 4 {
		case 0, 1:
			files["skills/"+name+"/SKILL.md"] = resourcestest.SkillMD(name, "Skill "+name+".", "body")
			files["skills/"+name+"/ref.md"] = "ref " + name
			wantSkills = append(wantSkills, name)
		case 2: // a broken name: a warning in lenient mode, the strict error otherwise
			files["skills/"+name+"/SKILL.md"] = resourcestest.SkillMD("Bad_"+name, "Bad.", "body")
			wantDiagFiles = append(wantDiagFiles, filepath.Join(dir, "skills", name, "SKILL.md"))
		case 3: // no frontmatter: skipped
			files["skills/"+name+"/SKILL.md"] = "plain\n"
			wantDiagFiles = append(wantDiagFiles, filepath.Join(dir, "skills", name, "SKILL.md"))
		}
	}
	files["skills/zz-not-a-skill.md"] = "# stray"
	wantDiagFiles = append(wantDiagFiles, filepath.Join(dir, "skills", "zz-not-a-skill.md"))
	resourcestest.WriteTree(t, dir, files)

	for range 10 {
		root, diags, err := LoadRoot("r", dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var gotSkills, gotDiagFiles []string
		for _, s := range root.Skills {
			gotSkills = append(gotSkills, s.Name)
		}
		for _, d := range diags {
			gotDiagFiles = append(gotDiagFiles, d.File)
		}
		// Lenient: the broken names load too, in their place.
		wantLenient := slices.Clone(wantSkills)
		for i := 2; i < 40; i += 4 {
			wantLenient = append(wantLenient, fmt.Sprintf("Bad_s%02d", i))
		}
		slices.SortFunc(wantLenient, func(a, b string) int {
			return strings.Compare(strings.TrimPrefix(a, "Bad_"), strings.TrimPrefix(b, "Bad_"))
		})
		if !slices.Equal(gotSkills, wantLenient) {
			t.Fatalf("skills %v, want %v", gotSkills, wantLenient)
		}
		if !slices.Equal(gotDiagFiles, wantDiagFiles) {
			t.Fatalf("diagnostics name %v, want %v", gotDiagFiles, wantDiagFiles)
		}
		_, _, err = LoadRoot("r", dir, Options{Strict: true})
		var inv *resources.InvalidResourceError
		if !errors.As(err, &inv) || inv.Origin.Path != "skills/s02/SKILL.md" {
			t.Fatalf("strict error %v, want the first broken name, skills/s02/SKILL.md", err)
		}
	}
}
