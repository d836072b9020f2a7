package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skilldir"
)

// piDir is the Pi package, whose node_modules (`make test-pi`, or npm ci)
// holds the pinned Pi agent.
const piDir = "../../integrations/pi"

// piSkill is one skill Pi's loader loaded: path is relative to the skills
// directory.
type piSkill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
}

// piLoadSkills runs Pi's own loader (integrations/pi/list-skills.mjs) on a
// skills directory. It skips the test when node or the Pi package's
// node_modules is missing; `make test` installs them first (test-pi).
func piLoadSkills(t *testing.T, skillsDir string) []piSkill {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; `make test` needs it for the Pi package")
	}
	if _, err := os.Stat(filepath.Join(piDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core", "skills.js")); err != nil {
		t.Skipf("Pi is not installed in %s (run `make test-pi` or `npm ci` there): %v", piDir, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(node, filepath.Join(piDir, "list-skills.mjs"), skillsDir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("list-skills.mjs: %v\n%s", err, stderr.String())
	}
	var out struct{ Skills []piSkill }
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("list-skills.mjs printed %q: %v", stdout.String(), err)
	}
	return out.Skills
}

func md(name, description, body string) string {
	fm := "---\n"
	if name != "" {
		fm += "name: " + name + "\n"
	}
	return fm + "description: " + description + "\n---\n" + body + "\n"
}

// writePiShapes writes, below root/skills, every shape of skill tree the Pi
// agent's loader (v0.73.1, dist/core/skills.js) has a rule for, and returns
// the paths (relative to skills/) that Pi loads and `loadout import` refuses
// on purpose, each with the text of the diagnostic import reports for it.
// docs/cli.md ("Differences from the Pi agent's skill loader") gives the
// reasons.
func writePiShapes(t *testing.T, root string) map[string]string {
	t.Helper()
	outside := resourcestest.Tree(t, map[string]string{"away/SKILL.md": md("away", "Outside the root.", "b")})
	long := strings.TrimSpace(strings.Repeat("Use this skill for long things. ", 50)) // 1,599 characters
	writeFiles(t, root, map[string]string{
		// A skill directory with files, a binary file, and further
		// directories: a SKILL.md below a skill is a file of it, not a skill.
		"skills/review/SKILL.md":          md("review", "Review code.", "b"),
		"skills/review/checklist.md":      "CHECK",
		"skills/review/fonts/Mono.ttf":    "\x00\x01\xff\xfe binary",
		"skills/review/sub/SKILL.md":      md("sub", "Not a skill: below review.", "b"),
		"skills/review/sub/deeper/ref.md": "r",
		// Nested skill directories, at any depth.
		"skills/group/nested/SKILL.md":      md("nested", "Nested one level.", "b"),
		"skills/group/deeper/deep/SKILL.md": md("deep", "Nested two levels.", "b"),
		"skills/group/notes.md":             "# below skills/, a *.md file is not a skill",
		"skills/group/assets/logo.txt":      "no skill here",
		// *.md files directly in skills/: a skill each, when they have a
		// description; Pi's name rule (frontmatter, else the directory).
		"skills/quick.md":   md("quick", "A skill of one file.", "QUICK"),
		"skills/unnamed.md": md("", "A one-file skill without a name.", "b"),
		"skills/README.md":  "# About these skills\n",
		// Passed over: hidden entries, node_modules at any depth.
		"skills/.hidden/SKILL.md":                 md("hidden", "Hidden.", "b"),
		"skills/node_modules/dep/SKILL.md":        md("dep", "A dependency.", "b"),
		"skills/group/node_modules/dep2/SKILL.md": md("dep2", "A nested dependency.", "b"),
		// Ignore files, in skills/ and nested (Pi prefixes nested patterns).
		"skills/.gitignore":               "build/\n*.draft.md\n",
		"skills/build/gen/SKILL.md":       md("gen", "Ignored by .gitignore.", "b"),
		"skills/wip.draft.md":             md("wip", "Ignored by .gitignore.", "b"),
		"skills/group/.ignore":            "old\n",
		"skills/group/old/SKILL.md":       md("old", "Ignored by group/.ignore.", "b"),
		"skills/other/old/SKILL.md":       md("old", "Not ignored, as group/.ignore is prefixed with group/.", "b"),
		"skills/.fdignore":                "legacy-*\n!legacy-keep\n",
		"skills/legacy-a/SKILL.md":        md("legacy-a", "Ignored by .fdignore.", "b"),
		"skills/legacy-keep/SKILL.md":     md("legacy-keep", "Re-included by .fdignore.", "b"),
		"skills/ignored-skill/.gitignore": "SKILL.md\n",
		"skills/ignored-skill/SKILL.md":   md("ignored-skill", "Its own SKILL.md is ignored.", "b"),
		// Frontmatter: unknown fields (both load it; Loadout warns), no
		// description (neither loads it), a long description (Pi loads it
		// whole; import cuts it with --truncate-descriptions).
		"skills/extra/SKILL.md":  "---\nname: extra\ndescription: Unknown fields.\nversion: 2\ndisable-model-invocation: true\n---\nb\n",
		"skills/nodesc/SKILL.md": "---\nname: nodesc\n---\nb\n",
		"skills/long/SKILL.md":   md("long", long, "b"),
		// A name Pi loads with a warning and the API server refuses.
		"skills/Bad_Name/SKILL.md": md("Bad_Name", "A name breaking the Agent Skills rules.", "b"),
		// Link targets inside the root, outside skills/.
		"vendor/linked/SKILL.md": md("linked", "Reached through a relative link.", "b"),
		"vendor/linked/ref.md":   "REF",
		"vendor/abs/SKILL.md":    md("abs", "Reached through an absolute link.", "b"),
	})
	links := map[string]string{
		"skills/linked":          "../vendor/linked",                // a skill directory linked in, inside the root
		"skills/zz-review-again": "review",                          // the same skill twice: loaded once, first path
		"skills/group/zz-loop":   ".",                               // a cycle: group/ itself
		"skills/broken":          "../missing",                      // a broken link
		"skills/away":            filepath.Join(outside, "away"),    // out of the root
		"skills/abs":             filepath.Join(root, "vendor/abs"), // absolute, inside the root
	}
	for link, target := range links {
		resourcestest.Symlink(t, target, filepath.Join(root, filepath.FromSlash(link)))
	}
	return map[string]string{
		"away/SKILL.md":     "skills/away: skipped: left out: it resolves outside its root",
		"abs/SKILL.md":      "skills/abs: skipped: left out: it goes through an absolute symbolic link",
		"unnamed.md":        `skills/unnamed.md: error: frontmatter has no name; using the name of the directory holding it, "skills"`,
		"Bad_Name/SKILL.md": `skills/Bad_Name/SKILL.md: error: name "Bad_Name" must contain only [a-z0-9-]`,
	}
}

// TestImport_LoadsWhatPiLoads runs the Pi agent's own skill loader and
// `loadout import --truncate-descriptions` on one tree with every shape Pi
// has a rule for: the same skills load, with the same names, descriptions
// (cut to 1,024 characters by the flag) and files, except the differences
// docs/cli.md lists, each of which import reports by file.
func TestImport_LoadsWhatPiLoads(t *testing.T) {
	root := t.TempDir()
	refused := writePiShapes(t, root)
	pi := piLoadSkills(t, filepath.Join(root, "skills"))

	skills, _, diags, _ := loadForImport(root, skilldir.Options{Strict: true, TruncateDescriptions: true})
	var report strings.Builder
	for _, d := range diags {
		report.WriteString(strings.TrimPrefix(d.String(), root+string(filepath.Separator)) + "\n")
	}
	var got []piSkill
	for _, s := range skills {
		got = append(got, piSkill{Name: s.Name, Description: s.Description, Path: strings.TrimPrefix(s.Origin.Path, "skills/")})
	}
	var want []piSkill
	for _, s := range pi {
		if diag, ok := refused[s.Path]; ok {
			mustContain(t, "import's report", report.String(), diag)
			delete(refused, s.Path)
			continue
		}
		s.Description = skilldir.TruncateDescription(s.Description)
		want = append(want, s)
	}
	for path := range refused {
		t.Errorf("Pi does not load %s, which the test lists as a difference", path)
	}
	byPath := func(a, b piSkill) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(got, byPath)
	slices.SortFunc(want, byPath)
	if !slices.Equal(got, want) {
		t.Errorf("import loads\n%v\nPi loads (differences taken out)\n%v\nimport's report:\n%s", got, want, report.String())
	}
	// The tree has a skill of each kind Pi loads; a loader that found fewer
	// would pass the comparison above only if Pi found fewer too.
	for _, p := range []string{"review/SKILL.md", "group/deeper/deep/SKILL.md", "quick.md", "linked/SKILL.md", "other/old/SKILL.md", "legacy-keep/SKILL.md", "long/SKILL.md", "extra/SKILL.md"} {
		if !slices.ContainsFunc(want, func(s piSkill) bool { return s.Path == p }) {
			t.Errorf("Pi did not load %s: the fixture no longer has the shape it is meant to show", p)
		}
	}
	mustContain(t, "import's report", report.String(), `skills/extra/SKILL.md: warning: unknown frontmatter field "version"`,
		"skills/long/SKILL.md: warning: description has 1599 characters")

	// And the files of a linked skill directory come along.
	for _, s := range skills {
		if s.Name == "linked" && (len(s.Files) != 1 || s.Files[0].Text() != "REF") {
			t.Errorf("linked skill: files %+v, want ref.md", s.Files)
		}
	}
}
