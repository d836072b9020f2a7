package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestImport_PrintsManifestsAndReportsSkips(t *testing.T) { // R-SK-2 (strict), R-SK-3
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
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
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
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
	if err := os.Symlink(filepath.Join(outside, "environ"), filepath.Join(root, "templates", "env.md")); err != nil {
		t.Fatal(err)
	}
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
	if err := os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "preview", "--root", root)
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "preview output", out+errOut, "LEAKED")
	mustContain(t, "stderr", errOut, filepath.Join(root, "AGENTS.md"), "outside its root")
}
