package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"sigs.k8s.io/yaml"
)

// anthropicsSkills lays out the skill layouts of github.com/anthropics/skills:
// skills with scripts/, reference/ and templates/ subfolders, nested schema
// directories, a LICENSE.txt and binary assets.
func anthropicsSkills(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	md := func(name string) string {
		return "---\nname: " + name + "\ndescription: The " + name + " skill.\nlicense: Complete terms in LICENSE.txt\n---\n# " + name + "\n"
	}
	writeFiles(t, root, map[string]string{
		"README.md":                                           "# Skills\n",
		"skills/algorithmic-art/SKILL.md":                     md("algorithmic-art"),
		"skills/algorithmic-art/LICENSE.txt":                  "Apache-2.0",
		"skills/algorithmic-art/templates/viewer.html":        "<html></html>",
		"skills/algorithmic-art/templates/generator.js":       "// p5",
		"skills/docx/SKILL.md":                                md("docx"),
		"skills/docx/ooxml.md":                                "# OOXML",
		"skills/docx/ooxml/schemas/wml.xsd":                   "<xsd/>",
		"skills/docx/scripts/document.py":                     "print(1)",
		"skills/mcp-builder/SKILL.md":                         md("mcp-builder"),
		"skills/mcp-builder/reference/best_practices.md":      "# Practices",
		"skills/theme-factory/SKILL.md":                       md("theme-factory"),
		"skills/theme-factory/themes/ocean.md":                "# Ocean",
		"skills/theme-factory/theme-showcase.pdf":             "%PDF-1.4\x00\x01\x02",
		"skills/webapp-testing/SKILL.md":                      md("webapp-testing"),
		"skills/webapp-testing/examples/element_discovery.py": "pass",
	})
	return root
}

type importedSkill struct {
	Kind     string
	Metadata struct{ Name string }
	Spec     struct {
		Files []struct{ Path string }
	}
}

func importedSkills(t *testing.T, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var s importedSkill
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if s.Kind != "Skill" {
			continue
		}
		for _, f := range s.Spec.Files {
			got[s.Metadata.Name] = append(got[s.Metadata.Name], f.Path)
		}
		if _, ok := got[s.Metadata.Name]; !ok {
			got[s.Metadata.Name] = nil
		}
	}
	return got
}

// One skill directory is one skill whatever its subfolders are called:
// algorithmic-art's templates/ is its files, not a seed layout's templates.
func TestImport_EverySkillDirectoryOfAnthropicsSkills_RSK3(t *testing.T) {
	root := anthropicsSkills(t)
	for name, dir := range map[string]string{
		"algorithmic-art": "skills/algorithmic-art", "docx": "skills/docx", "mcp-builder": "skills/mcp-builder",
		"theme-factory": "skills/theme-factory", "webapp-testing": "skills/webapp-testing",
	} {
		out, stderr, err := run(t, "import", filepath.Join(root, dir))
		if err != nil {
			t.Errorf("import %s: %v\n%s", dir, err, stderr)
			continue
		}
		got := importedSkills(t, out)
		if _, ok := got[name]; len(got) != 1 || !ok {
			t.Errorf("import %s printed skills %v, want only %s", dir, got, name)
		}
	}
	out, _, err := run(t, "import", filepath.Join(root, "skills", "algorithmic-art"))
	if err != nil {
		t.Fatal(err)
	}
	if files := strings.Join(importedSkills(t, out)["algorithmic-art"], " "); files != "LICENSE.txt templates/generator.js templates/viewer.html" {
		t.Errorf("algorithmic-art files: %s", files)
	}
}

// The repository's skills/ directory and its root import every skill.
func TestImport_AnthropicsSkillsDirectoryAndRoot(t *testing.T) {
	root := anthropicsSkills(t)
	for _, dir := range []string{filepath.Join(root, "skills"), root} {
		out, stderr, err := run(t, "import", dir)
		if err != nil {
			t.Fatalf("import %s: %v\n%s", dir, err, stderr)
		}
		got := importedSkills(t, out)
		for _, name := range []string{"algorithmic-art", "docx", "mcp-builder", "theme-factory", "webapp-testing"} {
			if _, ok := got[name]; !ok {
				t.Errorf("import %s: no skill %s in %v", dir, name, got)
			}
		}
	}
}

// Push takes each skill directory of anthropics/skills, templates/ and all.
func TestPush_EverySkillDirectoryOfAnthropicsSkills_RSK3(t *testing.T) {
	host := testnet.Registry(t)
	root := anthropicsSkills(t)
	for _, dir := range []string{"skills/algorithmic-art", "skills/docx", "skills/theme-factory"} {
		name := filepath.Base(dir)
		out, stderr, err := run(t, "push", filepath.Join(root, dir), host+"/skills/"+name)
		if err != nil {
			t.Errorf("push %s: %v\n%s", dir, err, stderr)
			continue
		}
		mustContain(t, "push "+dir, out, "kind: Skill", "reference: "+host+"/skills/"+name+"@sha256:")
	}
}

// An import that finds nothing says so and fails.
func TestImport_NothingFoundIsAnError(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{"notes/README.md": "# not a skill\n"})
	out, _, err := run(t, "import", dir)
	if err == nil || !strings.Contains(err.Error(), "found no skill") {
		t.Fatalf("err = %v, want one saying nothing was found", err)
	}
	if strings.TrimSpace(out) != "" {
		t.Fatalf("printed %q", out)
	}
}
