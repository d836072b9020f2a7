package skilldir_test

import (
	"fmt"
	"testing"

	"github.com/loadout-dev/loadout/internal/skilldir/benchtree"
)

// Benchmarks for the resolution target of docs/benchmarks.md: resolving and rendering N skills
// × 3 directory roots within 3× of merely reading the same files. Compare
// BenchmarkResolveRender/skills=N with BenchmarkReadFiles/skills=N; results
// are in docs/benchmarks.md. test/bench times the same passes against Pi.

var benchSizes = []int{100, 1000, 10000}

// benchRoots writes 3 roots of n skills each (same names in every root, so
// two thirds are shadowed), each skill with SKILL.md and one extra file.
func benchRoots(b *testing.B, n int) []string {
	b.Helper()
	dirs, err := benchtree.WriteTree(b.TempDir(), n)
	if err != nil {
		b.Fatal(err)
	}
	return dirs
}

// benchEachSize runs pass over the roots of each of benchSizes, timing the
// passes and not the writing of the roots: the two benchmarks below must be
// measured on the same trees to be compared.
func benchEachSize(b *testing.B, pass func(b *testing.B, n int, dirs []string)) {
	b.Helper()
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			dirs := benchRoots(b, n)
			b.ResetTimer()
			for b.Loop() {
				pass(b, n, dirs)
			}
		})
	}
}

func BenchmarkResolveRender(b *testing.B) {
	benchEachSize(b, func(b *testing.B, n int, dirs []string) {
		b.Helper()
		if winners, err := benchtree.LoadoutResolve(dirs); err != nil || winners != n {
			b.Fatalf("resolved %d skills, want %d: %v", winners, n, err)
		}
	})
}

func BenchmarkReadFiles(b *testing.B) {
	benchEachSize(b, func(b *testing.B, _ int, dirs []string) {
		b.Helper()
		if total, err := benchtree.ReadOnly(dirs); err != nil || total == 0 {
			b.Fatalf("read %d bytes: %v", total, err)
		}
	})
}
