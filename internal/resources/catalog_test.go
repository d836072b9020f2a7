package resources

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

func TestCatalog_ProjectRootWinsOverPlatform(t *testing.T) { // R-CAT-1, fixed example
	cat, err := BuildCatalog(exampleRoots())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := cat.Skill("review")
	if !ok || s.Body != projectBody || s.Origin.String() != "project/team-a/review" {
		t.Fatalf("winner = %+v, want the project review", s)
	}
	want := []contract.Shadowed{{Kind: KindSkill, Name: "review", Origin: "platform/loadout-system/review", ShadowedBy: "project/team-a/review"}}
	if !slices.Equal(cat.Shadowed, want) {
		t.Fatalf("shadowed = %+v, want %+v", cat.Shadowed, want)
	}
}

func TestCatalog_ReorderingRootsSwapsWinner(t *testing.T) { // R-CAT-1
	roots := exampleRoots()
	slices.Reverse(roots)
	cat, err := BuildCatalog(roots)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cat.Skill("review"); s.Body != platformBody {
		t.Fatalf("winner body = %q, want the platform one", s.Body)
	}
}

func TestCatalog_SkillAndTemplateOfOneNameCoexist(t *testing.T) { // R-CAT-1
	cat, err := BuildCatalog(exampleRoots())
	if err != nil {
		t.Fatal(err)
	}
	_, okS := cat.Skill("review")
	_, okT := cat.Template("review")
	if !okS || !okT {
		t.Fatalf("skill:review %v, template:review %v; want both", okS, okT)
	}
}

func TestCatalog_DuplicateInOneRootNamesBothObjects(t *testing.T) { // R-CAT-2
	root := Root{Name: "project", Templates: []Template{
		{Name: "x", Body: "a", Origin: Origin{Root: "project", Namespace: "ns", Object: "x1"}},
		{Name: "x", Body: "b", Origin: Origin{Root: "project", Namespace: "ns", Object: "x2"}},
	}}
	_, err := BuildCatalog([]Root{root})
	var dup *DuplicateNameError
	if !errors.As(err, &dup) {
		t.Fatalf("err = %v, want *DuplicateNameError", err)
	}
	if dup.Reason() != vocab.ReasonDuplicateName {
		t.Errorf("reason = %s", dup.Reason())
	}
	mustContain(t, "error", err.Error(), "project/ns/x1", "project/ns/x2", "template:x")
}

func TestCatalog_OutputSortedByKindThenLogicalName(t *testing.T) { // R-CAT-3
	// Object names and root order disagree with logical names on purpose.
	root := Root{Name: "r", Skills: []Skill{
		{Name: "zeta", Description: "z", Body: "z", Origin: Origin{Root: "r", Namespace: "a", Object: "a-object"}},
		{Name: "alpha", Description: "a", Body: "a", Origin: Origin{Root: "r", Namespace: "z", Object: "z-object"}},
	}, Templates: []Template{{Name: "beta", Body: "b", Origin: Origin{Root: "r", Object: "0"}}}}
	cat, err := BuildCatalog([]Root{{Name: "first", Skills: []Skill{{Name: "mid", Description: "m", Body: "m"}}}, root})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range cat.Entries {
		got = append(got, e.Kind+":"+e.Name)
	}
	want := []string{"skill:alpha", "skill:mid", "skill:zeta", "template:beta"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestCatalog_SerializedCatalogHoldsNoBody(t *testing.T) { // R-CAT-4
	cat, err := BuildCatalog(exampleRoots())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "serialized catalog", string(b), projectBody, platformBody, inactiveBody, "CHECKLIST")
	mustContain(t, "serialized catalog", string(b), "Lint rules.")
}

func TestCatalog_RepeatedRunsAreByteIdentical(t *testing.T) { // R-CAT-6
	first, err := Render(Input{Roots: exampleRoots()})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := Render(Input{Roots: exampleRoots()})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range first.Data {
			if again.Data[k] != v {
				t.Fatalf("key %s differs between runs", k)
			}
		}
		if again.Hash != first.Hash {
			t.Fatal("hash differs between runs")
		}
	}
}

func TestCatalog_CatalogAccessorsReturnCopies(t *testing.T) { // R-ACT-5
	cat, err := BuildCatalog(exampleRoots())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cat.Skill("review")
	s.Files[0].Content = []byte("changed")
	if again, _ := cat.Skill("review"); again.Files[0].Text() != "CHECKLIST" {
		t.Fatal("mutating a returned skill changed the catalog")
	}
}

func TestCatalog_InvalidObjectSkillIsInvalidResource(t *testing.T) { // R-SK-1 (objects strict)
	cases := map[string]Skill{
		"upper-case name":   {Name: "Review", Description: "d", Body: "b"},
		"double hyphen":     {Name: "a--b", Description: "d", Body: "b"},
		"leading hyphen":    {Name: "-a", Description: "d", Body: "b"},
		"65 chars":          {Name: string(make([]byte, 65)), Description: "d", Body: "b"},
		"blank description": {Name: "a", Description: "  ", Body: "b"},
		"long description":  {Name: "a", Description: string(slices.Repeat([]byte("x"), 1025)), Body: "b"},
		"long compat":       {Name: "a", Description: "d", Body: "b", Compatibility: string(slices.Repeat([]byte("x"), 501))},
		"traversal file":    {Name: "a", Description: "d", Body: "b", Files: []File{{Path: "../x"}}},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			s.Origin = Origin{Root: "r", Namespace: "ns", Object: "obj"}
			_, err := BuildCatalog([]Root{{Name: "r", Skills: []Skill{s}}})
			var inv *InvalidResourceError
			if !errors.As(err, &inv) || inv.Reason() != vocab.ReasonInvalidResource {
				t.Fatalf("err = %v, want *InvalidResourceError", err)
			}
			mustContain(t, "error", err.Error(), "r/ns/obj")
		})
	}
}
