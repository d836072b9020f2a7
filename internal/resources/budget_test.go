package resources

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// tenantFlood is a tenant flooding its namespace: n Skills of about size
// bytes each in one root (a restricted tenant namespace), all winners.
func tenantFlood(n, size int) Input {
	body := strings.Repeat("x", size-1024)
	files := []File{{Path: "notes.md", Content: []byte(strings.Repeat("y", 1024))}}
	root := Root{Name: "project"}
	for i := range n {
		root.Skills = append(root.Skills, Skill{Name: fmt.Sprintf("flood-%03d", i), Description: "d", Body: body, Files: files,
			Origin: Origin{Root: "project", Namespace: "team-a", Object: fmt.Sprintf("flood-%03d", i)}})
	}
	return Input{Workspace: contract.WorkspaceRef{Name: "dev", Namespace: "team-a"}, Roots: []Root{root},
		MaxContextBytes: vocab.DefaultMaxContextBytes}
}

// allocatedBy returns the bytes f allocates: the least of five runs (forty under the race detector), because
// TotalAlloc is process-wide (parallel tests add to it) and the race detector
// randomly drops sync.Pool items that encoding/json would reuse.
func allocatedBy(f func()) uint64 {
	least, runs := uint64(math.MaxUint64), 5
	if raceEnabled {
		runs = 40 // the least of many runs is one the dropped pool items did not hit
	}
	for range runs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestPublish_OverBudgetStopsBeforeHoldingMoreThanTheBudget: 150 Skills of
// 1.4 MB against the default 512 KiB budget are refused with ContextTooLarge
// having allocated less than 2× the budget (it was ~955 MB: every body was
// encoded before the size was checked).
func TestPublish_OverBudgetStopsBeforeHoldingMoreThanTheBudget(t *testing.T) {
	in := tenantFlood(150, 1_400_000)
	var err error
	alloc := allocatedBy(func() { _, err = Render(in) })
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || !tooLarge.AtLeast || tooLarge.Max != vocab.DefaultMaxContextBytes {
		t.Fatalf("err = %v, want a TooLargeError that stopped early", err)
	}
	if limit := uint64(2 * vocab.DefaultMaxContextBytes); alloc > limit {
		t.Fatalf("Publish allocated %d bytes refusing the context, want at most %d (2× the budget)", alloc, limit)
	}
}

// TestPublish_EscapeHeavyContextStopsAtTheFirstItemOverBudget: text whose
// JSON is six times its size (control characters) passes the lower-bound
// check but stops while skills.json is encoded, one skill over the budget at
// most.
func TestPublish_EscapeHeavyContextStopsAtTheFirstItemOverBudget(t *testing.T) {
	in := tenantFlood(40, 10_000)
	escapes := strings.Repeat("\x01", 8_900)
	for i := range in.Roots[0].Skills {
		in.Roots[0].Skills[i].Body = escapes
	}
	in.MaxContextBytes = 400_000 // raw text ~400 kB fits; its JSON (~2.2 MB) does not
	var err error
	alloc := allocatedBy(func() { _, err = Render(in) })
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || !tooLarge.AtLeast {
		t.Fatalf("err = %v, want a TooLargeError from encoding", err)
	}
	if alloc > 4*400_000 {
		t.Fatalf("allocated %d bytes, want the encoding stopped near the 400 kB budget (at most 4×)", alloc)
	}
	in.MaxContextBytes = 0 // unlimited: the same input publishes
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
}

// TestEncodeListWithin_SameBytesAsEncodingTheWholeDocument: item-by-item
// encoding is byte-identical to encoding skills.json and templates.json in
// one go (HTML characters, unicode, control characters, empty lists).
func TestEncodeListWithin_SameBytesAsEncodingTheWholeDocument(t *testing.T) {
	cat, err := BuildCatalog(exampleRoots())
	if err != nil {
		t.Fatal(err)
	}
	odd := Skill{Name: "odd", Description: "<b>&\u2028</b>", Body: "tab\t\x01 \"q\" é 😀", Files: []File{{Path: "a<b>.md", Content: []byte("\x00")}},
		Metadata: map[string]string{"z": "1", "a": "2"}, AllowedTools: []string{"Bash(git:*)"}}
	for _, skills := range [][]Skill{cat.Skills(), append(cat.Skills(), odd), nil} {
		want, err := encodeJSON(contract.Skills{Skills: append([]contract.SkillDoc{}, mapDocs(skills)...)}, "")
		if err != nil {
			t.Fatal(err)
		}
		w := &budgetWriter{max: -1}
		if err := encodeListWithin(w, "skills", len(skills), func(i int) any { return skillDoc(skills[i]) }); err != nil {
			t.Fatal(err)
		}
		if w.String() != want {
			t.Fatalf("item-by-item:\n%s\nwhole:\n%s", w.String(), want)
		}
	}
	templates := cat.Templates()
	want, _ := encodeJSON(templatesDoc(cat), "")
	w := &budgetWriter{max: -1}
	if err := encodeListWithin(w, "templates", len(templates), func(i int) any { return templateDoc(templates[i], cat) }); err != nil || w.String() != want {
		t.Fatalf("templates: %v\n%s\nwant\n%s", err, w.String(), want)
	}
}

func mapDocs(skills []Skill) []contract.SkillDoc {
	out := make([]contract.SkillDoc, len(skills))
	for i, s := range skills {
		out[i] = skillDoc(s)
	}
	return out
}

// BenchmarkPublish_TenantFloodOverBudget measures what refusing 150 × 1.4 MB
// Skills costs the manager (docs/benchmarks.md): B/op is the total allocated
// per Render, an upper bound of the memory it holds at its peak.
func BenchmarkPublish_TenantFloodOverBudget(b *testing.B) {
	in := tenantFlood(150, 1_400_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(in); err == nil {
			b.Fatal("published an over-budget context")
		}
	}
}
