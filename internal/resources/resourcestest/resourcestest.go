// Package resourcestest holds the fixed example (docs/rules.md) and small
// tree helpers for the tests of the packages around the engine (skilldir,
// published). The engine's own tests keep theirs: a test helper importing
// resources cannot be imported by resources' internal tests.
package resourcestest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
)

// Markers that make a leaked body easy to find in any output.
const (
	ProjectBody  = "PROJECT-REVIEW-BODY"
	PlatformBody = "PLATFORM-REVIEW-BODY"
	InactiveBody = "INACTIVE-LINT-BODY"
)

// ExampleRoots is the fixed example (docs/rules.md) as object roots: [project, platform], both with
// skill:review, the project one shipping checklist.md, plus template:review
// in the project root and an inactive skill lint.
func ExampleRoots() []resources.Root {
	project := resources.Root{
		Name: "project",
		Skills: []resources.Skill{
			{Name: "review", Description: "Project review method.", Body: ProjectBody,
				Files: []resources.File{{Path: "checklist.md", Content: []byte("CHECKLIST")}}, Origin: resources.Origin{Root: "project", Namespace: "team-a", Object: "review"}},
			{Name: "lint", Description: "Lint rules.", Body: InactiveBody, Origin: resources.Origin{Root: "project", Namespace: "team-a", Object: "lint"}},
		},
		Templates: []resources.Template{{Name: "review", Description: "Review a file.", Body: "Review {{file}} for {{owner}}. Focus on {{file}}.",
			Origin: resources.Origin{Root: "project", Namespace: "team-a", Object: "review"}}},
	}
	platform := resources.Root{
		Name: "platform",
		Skills: []resources.Skill{{Name: "review", Description: "Platform review.", Body: PlatformBody,
			Origin: resources.Origin{Root: "platform", Namespace: "loadout-system", Object: "review"}}},
	}
	return []resources.Root{project, platform}
}

// WriteTree writes files (slash paths → content) below dir.
func WriteTree(t testing.TB, dir string, files map[string]string) {
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

// SkillMD is a minimal SKILL.md.
func SkillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body + "\n"
}

// MustContain fails t when s lacks any of subs.
func MustContain(t testing.TB, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

// MustNotContain fails t when s holds any of subs.
func MustNotContain(t testing.TB, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q:\n%s", what, sub, s)
		}
	}
}

// ExampleInput renders the fixed example for Workspace team-a/dev with its
// instructions, review activated with checklist.md, and review_note.
func ExampleInput() resources.Input {
	return resources.Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        ExampleRoots(),
		Instructions: []resources.Instruction{{Body: "WORKSPACE-RULES", Origin: resources.Origin{Root: "workspace", Namespace: "team-a", Object: "dev"}}},
		Activate:     []resources.Activation{{Skill: "review", Files: []string{"checklist.md"}}},
		Registry: contract.Registry{Tools: []contract.Tool{{Name: "review_note", Description: "Record a note.", Extension: "review-extension",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}},
	}
}
