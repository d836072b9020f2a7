package resources

import (
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
				Files: []File{{Path: "checklist.md", Content: []byte("CHECKLIST")}}, Origin: Origin{Root: "project", Namespace: "team-a", Object: "review"}},
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
