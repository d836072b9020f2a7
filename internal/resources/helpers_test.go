package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Markers that make a leaked body easy to find in any output.
const (
	projectBody  = "PROJECT-REVIEW-BODY"
	platformBody = "PLATFORM-REVIEW-BODY"
	inactiveBody = "INACTIVE-LINT-BODY"
)

// exampleRoots is the fixed example (docs/rules.md) as object roots: [project, platform], both with
// skill:review, the project one shipping checklist.md, plus template:review
// in the project root and an inactive skill lint.
func exampleRoots() []Root {
	project := Root{
		Name: "project",
		Skills: []Skill{
			{Name: "review", Description: "Project review method.", Body: projectBody,
				Files: []File{{Path: "checklist.md", Content: "CHECKLIST"}}, Origin: Origin{Root: "project", Namespace: "team-a", Object: "review"}},
			{Name: "lint", Description: "Lint rules.", Body: inactiveBody, Origin: Origin{Root: "project", Namespace: "team-a", Object: "lint"}},
		},
		Templates: []Template{{Name: "review", Description: "Review a file.", Body: "Review {{file}} for {{owner}}. Focus on {{file}}.",
			Origin: Origin{Root: "project", Namespace: "team-a", Object: "review"}}},
	}
	platform := Root{
		Name: "platform",
		Skills: []Skill{{Name: "review", Description: "Platform review.", Body: platformBody,
			Origin: Origin{Root: "platform", Namespace: "loadout-system", Object: "review"}}},
	}
	return []Root{project, platform}
}

// writeTree writes files (slash paths → content) below dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func skillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body + "\n"
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q:\n%s", what, sub, s)
		}
	}
}
