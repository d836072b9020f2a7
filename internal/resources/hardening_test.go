package resources

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirRoot_ActivationEscapesAreRefused is the directory-root part of the
// bad-input catalog (SPEC R-ACT-1, R-ACT-4): a root read with LoadDirRoot,
// then activation requests that try every way out of the skill directory.
// Each is refused with an *ActivationError naming the request and why, and
// no byte of the outside file is returned.
func TestDirRoot_ActivationEscapesAreRefused(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"outside/secret.md":               "OUTSIDE SECRET",
		"root/AGENTS.md":                  "ROOT RULES",
		"root/skills/review/SKILL.md":     skillMD("review", "Review code.", "REVIEW BODY"),
		"root/skills/review/checklist.md": "CHECKLIST",
		"root/skills/review-old/SKILL.md": skillMD("review-old", "Old.", "OLD BODY"),
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
		if err := os.Symlink(target, filepath.Join(skillDir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := LoadDirRoot("project", root, DirOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Resolve([]Root{r})
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
			var ae *ActivationError
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
	if err := os.WriteFile(filepath.Join(skillDir, "%2e%2e"), []byte("LITERAL"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := cat.Activate("review", []string{"%2e%2e"})
	if err != nil || len(got.Files) != 1 || got.Files[0].Content != "LITERAL" {
		t.Errorf("literal %%2e%%2e file: %+v, %v", got, err)
	}
}
