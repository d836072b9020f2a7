package resources

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

func TestContext_OrderInstructionsMetadataActiveTools(t *testing.T) { // R-CTX-1, R-CTX-5
	cat, _ := BuildCatalog(exampleRoots())
	a, _ := cat.Activate("review", []string{"checklist.md"})
	reg := contract.Registry{
		Tools:        []contract.Tool{{Name: "read", Builtin: true}, {Name: "review_note", Description: "Record a note.", Extension: "review-extension"}},
		PromptGuides: []contract.PromptGuide{{Extension: "review-extension", Text: "GUIDE"}},
	}
	text, err := BuildContext([]Instruction{{Body: "RULES"}}, cat, []ActivatedSkill{*a}, reg)
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"RULES", "\n\n# Skills", "- lint: Lint rules.", "- review: Project review method.", projectBody, "CHECKLIST", "# Tools", "- read", "- review_note: Record a note.", "GUIDE"}
	last := -1
	for _, s := range order {
		i := strings.Index(text, s)
		if i <= last {
			t.Fatalf("%q at %d, not after %d:\n%s", s, i, last, text)
		}
		last = i
	}
	if !strings.HasPrefix(text, "RULES\n\n# Skills") || !strings.HasSuffix(text, "GUIDE\n") {
		t.Fatalf("parts are not joined with a blank line:\n%s", text)
	}
}

func TestContext_InactiveBodyNeverAppearsDescriptionDoes(t *testing.T) { // R-CTX-2
	cat, _ := BuildCatalog(exampleRoots())
	text, err := BuildContext(nil, cat, nil, contract.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "context", text, projectBody, platformBody, inactiveBody)
	mustContain(t, "context", text, "Lint rules.", "Project review method.")
}

func TestContext_ActiveSkillsSortedByName(t *testing.T) { // R-CTX-1
	cat, _ := BuildCatalog(exampleRoots())
	r, _ := cat.Activate("review", nil)
	l, _ := cat.Activate("lint", nil)
	text, err := BuildContext(nil, cat, []ActivatedSkill{*r, *l}, contract.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Index(text, inactiveBody) > strings.Index(text, projectBody) {
		t.Fatal("lint must come before review")
	}
}

func TestContext_RefusesDoubleAndForeignActivation(t *testing.T) { // R-CTX-3
	cat, _ := BuildCatalog(exampleRoots())
	a, _ := cat.Activate("review", nil)
	var ae *ActivationError
	if _, err := BuildContext(nil, cat, []ActivatedSkill{*a, *a}, contract.Registry{}); !errors.As(err, &ae) {
		t.Fatalf("double activation: err = %v", err)
	}
	// The platform's review, activated from a catalog where it won, is not
	// this catalog's winner.
	roots := exampleRoots()
	other, _ := BuildCatalog(roots[1:])
	foreign, _ := other.Activate("review", nil)
	if _, err := BuildContext(nil, cat, []ActivatedSkill{*foreign}, contract.Registry{}); !errors.As(err, &ae) {
		t.Fatalf("foreign activation: err = %v", err)
	}
	if _, err := BuildContext(nil, cat, []ActivatedSkill{{Name: "ghost"}}, contract.Registry{}); !errors.As(err, &ae) {
		t.Fatalf("unknown activation: err = %v", err)
	}
}

func TestContext_NoTrimmingOnlyTextAndSize(t *testing.T) { // R-CTX-4
	big := strings.Repeat("x", 1<<20)
	roots := []Root{{Name: "r", Instructions: []Instruction{{Body: big}}}}
	r, err := Render(Input{Roots: roots})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Data[contract.KeySystemPrompt], big) || r.Bytes < 1<<20 {
		t.Fatal("the context builder trimmed the instructions")
	}
}
