package skilldir

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// skillOrigins lists "name=origin path" of the skills, in order.
func skillOrigins(skills []resources.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name+"="+s.Origin.Path)
	}
	return out
}

// diagFor returns the diagnostics naming file.
func diagFor(diags []resources.Diagnostic, file string) []resources.Diagnostic {
	var out []resources.Diagnostic
	for _, d := range diags {
		if d.File == file {
			out = append(out, d)
		}
	}
	return out
}

// TestDirRoot_DiscoversSkillsWherePiDoes: the shapes of real trees that the
// Pi agent's loader accepts (nested skill directories, *.md files directly in
// skills/, symlinked skill directories) load, and what Pi passes over
// (hidden entries, node_modules, ignored paths, a SKILL.md below a skill)
// does not.
func TestDirRoot_DiscoversSkillsWherePiDoes(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/top/SKILL.md":                 resourcestest.SkillMD("top", "Top level.", "b"),
		"skills/top/sub/SKILL.md":             resourcestest.SkillMD("sub", "A file of top, not a skill.", "b"),
		"skills/group/nested/SKILL.md":        resourcestest.SkillMD("nested", "Nested one level.", "b"),
		"skills/group/deeper/deep/SKILL.md":   resourcestest.SkillMD("deep", "Nested two levels.", "b"),
		"skills/group/notes.md":               "# not a skill: below skills/, only SKILL.md directories are",
		"skills/quick.md":                     resourcestest.SkillMD("quick", "A skill of one file.", "QUICK BODY"),
		"skills/README.md":                    "# About these skills\n",
		"skills/.hidden/SKILL.md":             resourcestest.SkillMD("hidden", "Hidden.", "b"),
		"skills/node_modules/dep/SKILL.md":    resourcestest.SkillMD("dep", "A dependency.", "b"),
		"skills/.gitignore":                   "build/\n*.draft.md\n",
		"skills/build/gen/SKILL.md":           resourcestest.SkillMD("gen", "Ignored by .gitignore.", "b"),
		"skills/wip.draft.md":                 resourcestest.SkillMD("wip", "Ignored by .gitignore.", "b"),
		"skills/group/.ignore":                "nested-old\n",
		"skills/group/nested-old/SKILL.md":    resourcestest.SkillMD("nested-old", "Ignored by group/.ignore.", "b"),
		"skills/assets/logo.txt":              "no skill here",
		"shared/linked/SKILL.md":              resourcestest.SkillMD("linked", "Reached through a symlink inside the root.", "b"),
		"shared/linked/ref.md":                "REF",
		"skills/top/sub/ref-of-a-subskill.md": "r",
	})
	outside := resourcestest.Tree(t, map[string]string{"away/SKILL.md": resourcestest.SkillMD("away", "Outside the root.", "LEAKED")})
	resourcestest.Symlink(t, "../shared/linked", filepath.Join(dir, "skills", "linked"))
	resourcestest.Symlink(t, "top", filepath.Join(dir, "skills", "zz-top-again"))
	resourcestest.Symlink(t, filepath.Join(outside, "away"), filepath.Join(dir, "skills", "away"))
	resourcestest.Symlink(t, "..", filepath.Join(dir, "skills", "group", "loop"))
	resourcestest.Symlink(t, "../missing", filepath.Join(dir, "skills", "broken"))
	resourcestest.Symlink(t, filepath.Join(dir, "shared", "linked"), filepath.Join(dir, "skills", "absolute"))

	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deep=skills/group/deeper/deep/SKILL.md",
		"nested=skills/group/nested/SKILL.md",
		"linked=skills/linked/SKILL.md",
		"quick=skills/quick.md",
		"top=skills/top/SKILL.md",
	}
	if got := skillOrigins(root.Skills); !slices.Equal(got, want) {
		t.Fatalf("skills %v,\nwant %v\ndiagnostics %v", got, want, diags)
	}
	for _, s := range root.Skills {
		switch s.Name {
		case "quick":
			if s.Body != "QUICK BODY" || DirOf(s) != "" || len(s.Files) != 0 {
				t.Errorf("quick.md: body %q, dir %q, files %v; want its body in memory and no files", s.Body, DirOf(s), s.Files)
			}
		case "top":
			if !slices.ContainsFunc(s.Files, func(f resources.File) bool { return f.Path == "sub/SKILL.md" }) {
				t.Errorf("top: files %v, want sub/SKILL.md among them (R-SK-3)", s.Files)
			}
		case "linked":
			if len(s.Files) != 1 || s.Files[0].Text() != "REF" {
				t.Errorf("linked: files %v", s.Files)
			}
		}
	}
	for file, want := range map[string]string{
		"skills/away":                  "skipped: left out: it resolves outside its root",
		"skills/group/loop":            "warning: left out: a symbolic link to a directory that holds it (a cycle)",
		"skills/broken":                "warning: left out: a broken symbolic link",
		"skills/zz-top-again/SKILL.md": "warning: the same file as " + filepath.Join(dir, "skills/top/SKILL.md"),
		"skills/README.md":             "warning: not a skill: no YAML frontmatter",
		"skills/group/notes.md":        "warning: not a skill",
		"skills/assets":                "warning: no skill in it: no SKILL.md at any depth",
	} {
		got := diagFor(diags, filepath.Join(dir, filepath.FromSlash(file)))
		if len(got) != 1 || !strings.Contains(got[0].String(), want) {
			t.Errorf("%s: diagnostics %v, want one with %q", file, got, want)
		}
	}
	for _, d := range diags {
		if strings.Contains(d.File, "build") || strings.Contains(d.File, "draft") || strings.Contains(d.File, "nested-old") ||
			strings.Contains(d.File, "node_modules") || strings.Contains(d.File, ".hidden") {
			t.Errorf("a diagnostic about what Pi passes over silently: %v", d)
		}
	}
	if len(diags) != 8 {
		t.Errorf("%d diagnostics, want 8: %v", len(diags), diags)
	}
}

// TestDirRoot_OnlyTheHighestSkilllessDirectoryIsReported: a directory tree
// without any SKILL.md is one warning, not one per directory.
func TestDirRoot_OnlyTheHighestSkilllessDirectoryIsReported(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/a/b/c/file.txt": "x",
		"skills/a/d/file.txt":   "y",
		"skills/s/SKILL.md":     resourcestest.SkillMD("s", "S.", "b"),
	})
	_, diags, err := LoadRoot("r", dir, Options{Strict: true})
	if err != nil || len(diags) != 1 || diags[0].File != filepath.Join(dir, "skills", "a") || diags[0].Severity != resources.SeverityWarning {
		t.Fatalf("err %v, diagnostics %v; want one warning naming skills/a", err, diags)
	}
}

// TestDirRoot_RootFileSkillNamesFollowPi: a *.md skill directly in skills/
// without a name takes the name of its directory, as in Pi: a warning in
// lenient mode, an error in strict mode; with a valid name it loads in both.
func TestDirRoot_RootFileSkillNamesFollowPi(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/named.md":   resourcestest.SkillMD("named", "Named.", "b"),
		"skills/unnamed.md": "---\ndescription: No name.\n---\nb\n",
	})
	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil || !slices.Equal(skillOrigins(root.Skills), []string{"named=skills/named.md", "skills=skills/unnamed.md"}) ||
		len(diags) != 1 || diags[0].Severity != resources.SeverityWarning {
		t.Fatalf("lenient: err %v, skills %v, diagnostics %v", err, skillOrigins(root.Skills), diags)
	}
	root, diags, err = LoadRoot("r", dir, Options{Strict: true})
	if err == nil || !slices.Equal(skillOrigins(root.Skills), []string{"named=skills/named.md"}) || len(diags) != 1 || diags[0].Severity != resources.SeverityError {
		t.Fatalf("strict: err %v, skills %v, diagnostics %v", err, skillOrigins(root.Skills), diags)
	}
}

// TestDirRoot_UnknownFrontmatterFieldsAreWarnedNamingFileAndField: every
// unknown field is one warning naming the file and the field; the skill loads.
func TestDirRoot_UnknownFrontmatterFieldsAreWarnedNamingFileAndField(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: d\nversion: 2\ndisable-model-invocation: true\n---\nb\n",
	})
	root, diags, err := LoadRoot("r", dir, Options{Strict: true})
	if err != nil || len(root.Skills) != 1 || len(diags) != 2 {
		t.Fatalf("err %v, skills %d, diagnostics %v", err, len(root.Skills), diags)
	}
	file := filepath.Join(dir, "skills", "review", "SKILL.md")
	for i, field := range []string{"disable-model-invocation", "version"} {
		if d := diags[i]; d.File != file || d.Severity != resources.SeverityWarning || !strings.Contains(d.Message, `unknown frontmatter field "`+field+`"`) {
			t.Errorf("diagnostic %d = %v, want a warning naming %s and %s", i, d, file, field)
		}
	}
}

// TestDirRoot_LongDescriptionIsSkippedOrTruncatedOnRequest: a description
// over 1,024 characters skips the skill with a diagnostic saying what to do;
// with TruncateDescriptions it loads cut to 1,024 characters, with a warning.
func TestDirRoot_LongDescriptionIsSkippedOrTruncatedOnRequest(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("é", 1000) + strings.Repeat("x", 100)
	resourcestest.WriteTree(t, dir, map[string]string{"skills/long/SKILL.md": resourcestest.SkillMD("long", long, "b")})
	root, diags, err := LoadRoot("r", dir, Options{Strict: true})
	if err != nil || len(root.Skills) != 0 || len(diags) != 1 || diags[0].Severity != resources.SeveritySkipped ||
		!strings.Contains(diags[0].Message, "1100 characters") || !strings.Contains(diags[0].Message, "--truncate-descriptions") {
		t.Fatalf("default: err %v, skills %d, diagnostics %v", err, len(root.Skills), diags)
	}
	root, diags, err = LoadRoot("r", dir, Options{Strict: true, TruncateDescriptions: true})
	if err != nil || len(root.Skills) != 1 || len(diags) != 1 || diags[0].Severity != resources.SeverityWarning || !strings.Contains(diags[0].Message, "truncated to 1024") {
		t.Fatalf("truncate: err %v, skills %d, diagnostics %v", err, len(root.Skills), diags)
	}
	if got := root.Skills[0].Description; got != long[:len(strings.Repeat("é", 1000))+24] {
		t.Fatalf("description cut to %d bytes, want the first 1024 characters", len(got))
	}
	if _, err := resources.BuildCatalog([]resources.Root{root}); err != nil {
		t.Fatalf("the truncated skill does not resolve: %v", err)
	}
}

// TestDirRoot_IgnoreFilesArePrefixedAsPiDoes: a pattern in a nested ignore
// file applies to its own directory only (Pi prefixes it), negation
// re-includes, and an ignored SKILL.md makes no skill.
func TestDirRoot_IgnoreFilesArePrefixedAsPiDoes(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/.fdignore":         "old-*\n!old-keep\n# a comment\n\n",
		"skills/old-a/SKILL.md":    resourcestest.SkillMD("old-a", "Ignored.", "b"),
		"skills/old-keep/SKILL.md": resourcestest.SkillMD("old-keep", "Re-included.", "b"),
		"skills/a/.gitignore":      "x\n/SKILL.md\n",
		"skills/a/SKILL.md":        resourcestest.SkillMD("a", "Its SKILL.md is ignored.", "b"),
		"skills/a/x/SKILL.md":      resourcestest.SkillMD("x", "Ignored: a/x.", "b"),
		"skills/a/y/x/SKILL.md":    resourcestest.SkillMD("x", "Not ignored, a/x is anchored once prefixed.", "b"),
		"skills/b/x/SKILL.md":      resourcestest.SkillMD("x2", "Not ignored, the pattern is a/x.", "b"),
	})
	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x=skills/a/y/x/SKILL.md", "x2=skills/b/x/SKILL.md", "old-keep=skills/old-keep/SKILL.md"}
	if got := skillOrigins(root.Skills); !slices.Equal(got, want) {
		t.Fatalf("skills %v, want %v (diagnostics %v)", got, want, diags)
	}
}

// TestDirRoot_SkillFileLinkedFromElsewhereInTheRootLoads: a SKILL.md that is
// a link to a file elsewhere in the root (outside its skill directory) loads,
// as Pi loads it, while the skill's other files stay read through the skill
// directory; a SKILL.md linked from outside the root is still left out.
func TestDirRoot_SkillFileLinkedFromElsewhereInTheRootLoads(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"shared/one.md":     resourcestest.SkillMD("one", "Its SKILL.md lives in shared/.", "ONE BODY"),
		"skills/one/ref.md": "REF",
		"skills/two/ref.md": "REF",
	})
	outside := resourcestest.Tree(t, map[string]string{"two.md": resourcestest.SkillMD("two", "Outside the root.", "LEAKED")})
	resourcestest.Symlink(t, "../../shared/one.md", filepath.Join(dir, "skills", "one", "SKILL.md"))
	resourcestest.Symlink(t, filepath.Join(outside, "two.md"), filepath.Join(dir, "skills", "two", "SKILL.md"))

	root, diags, err := LoadRoot("r", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Skills) != 1 {
		t.Fatalf("skills %v, want only one; diagnostics %v", skillOrigins(root.Skills), diags)
	}
	one := root.Skills[0]
	if one.Name != "one" || one.Body != "ONE BODY" || len(one.Files) != 1 || one.Files[0].Text() != "REF" {
		t.Errorf("one: name %q, body %q, files %v; want its linked body and ref.md", one.Name, one.Body, one.Files)
	}
	got := diagFor(diags, filepath.Join(dir, "skills", "two", "SKILL.md"))
	if len(got) != 1 || !strings.Contains(got[0].String(), "skipped: left out: it resolves outside its root") {
		t.Errorf("skills/two/SKILL.md: diagnostics %v, want it left out as outside the root", got)
	}
}
