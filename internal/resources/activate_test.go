package resources

import (
	"errors"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

func TestActivation_UnknownSkillIsAnError(t *testing.T) { // R-ACT-1
	cat, _ := BuildCatalog(exampleRoots())
	_, err := cat.Activate("nope", nil)
	var ae *ActivationError
	if !errors.As(err, &ae) || ae.Reason() != vocab.ReasonActivationFailed {
		t.Fatalf("err = %v, want *ActivationError", err)
	}
}

func TestActivation_ReturnsWinnerBodyAndFilesOnlyOnActivation(t *testing.T) { // R-ACT-1, fixed example
	cat, _ := BuildCatalog(exampleRoots())
	a, err := cat.Activate("review", []string{"checklist.md"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Body != projectBody || len(a.Files) != 1 || a.Files[0].Content != "CHECKLIST" {
		t.Fatalf("activated = %+v", a)
	}
}

func TestActivation_RequestKeptSourceResolvedDuplicatesDropped(t *testing.T) { // R-ACT-3
	cat, _ := BuildCatalog(exampleRoots())
	a, err := cat.Activate("review", []string{"./checklist.md", "./checklist.md", "checklist.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != 2 || a.Files[0].Request != "./checklist.md" || a.Files[0].Source != "checklist.md" || a.Files[1].Request != "checklist.md" {
		t.Fatalf("files = %+v", a.Files)
	}
}

func TestActivation_ObjectFilesRefuseTraversalAndAbsolutePaths(t *testing.T) { // R-ACT-4 (a)
	cat, _ := BuildCatalog(exampleRoots())
	for _, req := range []string{"../checklist.md", "/checklist.md", "a/../../checklist.md", `..\checklist.md`, ""} {
		if _, err := cat.Activate("review", []string{req}); err == nil {
			t.Errorf("request %q was not refused", req)
		}
	}
}

func TestActivation_ResultIsDeepCopy(t *testing.T) { // R-ACT-5
	cat, _ := BuildCatalog(exampleRoots())
	a, _ := cat.Activate("review", []string{"checklist.md"})
	a.Body = "mutated"
	a.Files[0].Content = "mutated"
	b, _ := cat.Activate("review", []string{"checklist.md"})
	if b.Body != projectBody || b.Files[0].Content != "CHECKLIST" {
		t.Fatal("mutating an activation changed the catalog")
	}
}
