package exthost

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// celBomb is a crafted expression: 3,144 characters, under
// the CRD's length limit, that took 22 s and 11 GB to type-check.
var celBomb = "size(call.arguments.l" + strings.Repeat(".map(a,[a,a])", 240) + ")>0"

// TestCompileCEL_NestingBombIsRejectedWithAClearReason: the bomb, deep list
// literals and long operator chains are refused by the parser's nesting
// bound, naming it, before the type checker sees them; an Extension holding
// the bomb is invalid with the reason on the field. BenchmarkCompileCEL_Bomb
// measures how fast (well under a second).
// BenchmarkCompileCEL_Bomb: rejecting the bomb (docs/benchmarks.md; it was
// 22 s and 11 GB before the bounds).
func BenchmarkCompileCEL_Bomb(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileCEL(vocab.BeforeToolCall, celBomb, ""); err == nil {
			b.Fatal("bomb compiled")
		}
	}
}

// TestValidateObjectSyntax_ParsesWithoutTypeChecking: the check for
// Extensions that cannot load still refuses what does not parse (the nesting
// bomb included) but never runs the type checker, so a type error passes it
// while ValidateObject reports it.

func TestCompileCEL_NestingBombIsRejectedWithAClearReason(t *testing.T) {
	for name, expr := range map[string]string{
		"chained map":    celBomb,
		"nested lists":   "size(" + strings.Repeat("[", 200) + "1" + strings.Repeat("]", 200) + ") > 0",
		"nested maps":    "size(" + strings.Repeat("{'a':", 150) + "1" + strings.Repeat("}", 150) + ") > 0",
		"operator chain": "size(" + strings.Repeat("[call.arguments.x] + ", 100) + "[1]) > 0",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := compileCEL(vocab.BeforeToolCall, expr, "")
			if err == nil || !strings.Contains(err.Error(), "nests deeper than 32 levels") {
				t.Fatalf("err = %v, want the nesting bound", err)
			}
			if err := CheckCELSyntax(vocab.BeforeToolCall, expr); err == nil {
				t.Fatal("the syntax check accepted it")
			}
		})
	}
	if _, err := compileCEL(vocab.BeforeToolCall, strings.Repeat(" ", CELMaxLength)+"true", ""); err == nil || !strings.Contains(err.Error(), "more than the limit of 4096") {
		t.Fatalf("over-long expression: %v", err)
	}
	// Ordinary policies stay well inside the bounds.
	for _, expr := range []string{
		"call.arguments.items.all(x, x.size() < 10 && x.startsWith('a')) || call.name in ['a', 'b', 'c']",
		"size(call.arguments.l" + strings.Repeat(".map(a,[a,a])", 8) + ") > 0",
	} {
		if _, err := compileCEL(vocab.BeforeToolCall, expr, ""); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}
