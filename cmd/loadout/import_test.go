package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"sigs.k8s.io/yaml"
)

func TestImport_PrintsManifestsAndReportsSkips(t *testing.T) { // R-SK-2 (strict), R-SK-3
	dir := resourcestest.Tree(t, map[string]string{
		"review/SKILL.md":     "---\nname: review\ndescription: Review code.\n---\nBODY\n",
		"review/checklist.md": "CHECK",
		"broken/SKILL.md":     "no frontmatter",
		"Bad_Name/SKILL.md":   "---\nname: Bad_Name\ndescription: d\n---\nb\n",
	})
	out, stderr, err := run(t, "import", dir, "-n", "team-a")
	if err == nil {
		t.Fatal("want a non-zero exit: two skills were not imported")
	}
	mustContain(t, "stderr", stderr, "broken/SKILL.md: skipped", "Bad_Name/SKILL.md: error")
	var obj struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Body  string
			Files []struct{ Path, Content string }
		}
	}
	if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Kind != "Skill" || obj.Metadata.Name != "review" || obj.Metadata.Namespace != "team-a" || obj.Spec.Body != "BODY" ||
		len(obj.Spec.Files) != 1 || obj.Spec.Files[0].Path != "checklist.md" {
		t.Fatalf("printed %s", out)
	}
	if strings.Contains(out, "creationTimestamp") || strings.Contains(out, "status") {
		t.Fatalf("printed noise fields:\n%s", out)
	}
}

func TestImport_CleanDirectoryExitsZero(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: Review code.\n---\nBODY\n",
		"templates/fix.md":       "Fix {{file}}.",
	})
	out, stderr, err := run(t, "import", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	mustContain(t, "output", out, "kind: Skill", "kind: Template", "Fix {{file}}.")
}

// TestImport_SymlinkedTemplateOutsideTheRootIsSkippedNotPrinted: the
// reproduction of `ln -s /proc/self/environ root/templates/env.md; loadout
// import root`: the file is reported as skipped, nothing of it is printed,
// and the exit status says something was skipped.
func TestImport_SymlinkedTemplateOutsideTheRootIsSkippedNotPrinted(t *testing.T) {
	outside, root := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"environ": "AWS_SECRET_ACCESS_KEY=LEAKED"})
	writeFiles(t, root, map[string]string{"templates/ok.md": "Fine {{x}}"})
	resourcestest.Symlink(t, filepath.Join(outside, "environ"), filepath.Join(root, "templates", "env.md"))
	out, errOut, err := run(t, "import", root)
	if err == nil {
		t.Fatal("import exited 0 after skipping a file")
	}
	mustNotContain(t, "import output", out+errOut, "LEAKED")
	mustContain(t, "stderr", errOut, filepath.Join(root, "templates", "env.md"), "outside its root")
	mustContain(t, "stdout", out, "name: ok")
}

// TestPreview_AgentsMDSymlinkedOutOfTheRootIsNotInThePrompt: `ln -s
// /etc/passwd root/AGENTS.md; loadout preview --root root` publishes no byte
// of the target and reports the file.
func TestPreview_AgentsMDSymlinkedOutOfTheRootIsNotInThePrompt(t *testing.T) {
	outside, root := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"passwd": "root:x:0:0:LEAKED"})
	writeFiles(t, root, map[string]string{"skills/review/SKILL.md": "---\nname: review\ndescription: Review.\n---\nBODY\n"})
	resourcestest.Symlink(t, filepath.Join(outside, "passwd"), filepath.Join(root, "AGENTS.md"))
	out, errOut, err := run(t, "preview", "--root", root)
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "preview output", out+errOut, "LEAKED")
	mustContain(t, "stderr", errOut, filepath.Join(root, "AGENTS.md"), "outside its root")
}

// TestImport_FindsNestedAndRootFileSkillsAsPiDoes: skills nested below a
// group directory, a *.md skill directly in skills/ and a skill directory
// reached through a relative symlink are imported; a link out of the root is
// reported and makes the exit status non-zero.
func TestImport_FindsNestedAndRootFileSkillsAsPiDoes(t *testing.T) {
	outside, root := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"away/SKILL.md": "---\nname: away\ndescription: d\n---\nLEAKED\n"})
	writeFiles(t, root, map[string]string{
		"skills/group/review/SKILL.md": "---\nname: review\ndescription: Review code.\n---\nREVIEW\n",
		"skills/quick.md":              "---\nname: quick\ndescription: A one-file skill.\n---\nQUICK\n",
		"vendor/linked/SKILL.md":       "---\nname: linked\ndescription: Linked in.\n---\nLINKED\n",
	})
	resourcestest.Symlink(t, "../vendor/linked", filepath.Join(root, "skills", "linked"))
	resourcestest.Symlink(t, filepath.Join(outside, "away"), filepath.Join(root, "skills", "away"))
	out, errOut, err := run(t, "import", root)
	if err == nil {
		t.Fatal("import exited 0 after leaving out a link out of the root")
	}
	mustContain(t, "stderr", errOut, filepath.Join(root, "skills", "away")+": skipped: left out: it resolves outside its root")
	mustContain(t, "stdout", out, "name: review", "body: REVIEW", "name: quick", "body: QUICK", "name: linked", "body: LINKED")
	mustNotContain(t, "import output", out+errOut, "LEAKED")
}

// TestImport_LongDescriptionIsSkippedUnlessTruncateDescriptions: the skill
// is not imported by default (non-zero exit, the diagnostic names the flag);
// with --truncate-descriptions it is, cut to 1,024 characters, with a warning.
func TestImport_LongDescriptionIsSkippedUnlessTruncateDescriptions(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("d", 1500)
	writeFiles(t, dir, map[string]string{"long/SKILL.md": "---\nname: long\ndescription: " + long + "\n---\nBODY\n"})
	out, errOut, err := run(t, "import", dir)
	if err == nil || strings.Contains(out, "kind: Skill") {
		t.Fatalf("imported a description the Skill API refuses (err %v):\n%s", err, out)
	}
	mustContain(t, "stderr", errOut, "long/SKILL.md: skipped: description has 1500 characters", "--truncate-descriptions")
	out, errOut, err = run(t, "import", dir, "--truncate-descriptions")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	mustContain(t, "stderr", errOut, "long/SKILL.md: warning: description has 1500 characters", "truncated to 1024")
	var obj struct{ Spec struct{ Description string } }
	if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Spec.Description != long[:1024] {
		t.Fatalf("description of %d characters, want the first 1024", len(obj.Spec.Description))
	}
}

// TestImport_UnknownFrontmatterFieldIsWarnedAndImportSucceeds: the field is
// named on stderr; the exit status stays zero.
func TestImport_UnknownFrontmatterFieldIsWarnedAndImportSucceeds(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{"review/SKILL.md": "---\nname: review\ndescription: d\nversion: 3\n---\nBODY\n"})
	out, errOut, err := run(t, "import", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	mustContain(t, "stderr", errOut, filepath.Join(dir, "review", "SKILL.md")+`: warning: unknown frontmatter field "version"`)
	mustContain(t, "stdout", out, "name: review")
}

// TestImport_TwoSkillsOfOneNameAreAnError: nested directories make name
// clashes possible; two Skill objects of one name would overwrite each other,
// so the second is reported and not printed.
func TestImport_TwoSkillsOfOneNameAreAnError(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"skills/a/review/SKILL.md": "---\nname: review\ndescription: First.\n---\nFIRST\n",
		"skills/b/review/SKILL.md": "---\nname: review\ndescription: Second.\n---\nSECOND\n",
	})
	out, errOut, err := run(t, "import", dir)
	if err == nil {
		t.Fatal("import exited 0 with two skills named review")
	}
	mustContain(t, "stderr", errOut, filepath.Join(dir, "skills/b/review/SKILL.md")+`: error: skill name "review" is also the name of `+filepath.Join(dir, "skills/a/review/SKILL.md"))
	mustContain(t, "stdout", out, "FIRST")
	mustNotContain(t, "stdout", out, "SECOND")
}

// TestImport_FileOverOneMiBWithoutPushFailsNamingIt: a file too large to load
// is not dropped quietly: the exit status is non-zero and the report points
// to --push.
func TestImport_FileOverOneMiBWithoutPushFailsNamingIt(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{
		"docx/SKILL.md":       "---\nname: docx\ndescription: d\n---\nBODY\n",
		"docx/assets/big.bin": strings.Repeat("\x00\xff", 600<<10),
	})
	_, errOut, err := run(t, "import", dir)
	if err == nil {
		t.Fatal("import exited 0 after leaving out a file")
	}
	mustContain(t, "stderr", errOut, filepath.Join(dir, "docx/assets/big.bin")+": skipped: left out of the skill", "--push")
}
