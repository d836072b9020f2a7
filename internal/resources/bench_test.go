package resources

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Benchmarks for DESIGN's resolution target: resolving and rendering N skills
// × 3 directory roots within 3× of merely reading the same files. Compare
// BenchmarkResolveRender/skills=N with BenchmarkReadFiles/skills=N; results
// are in docs/benchmarks.md.

var benchSizes = []int{100, 1000, 10000}

// benchRoots writes 3 roots of n skills each (same names in every root, so
// two thirds are shadowed), each skill with SKILL.md and one extra file.
func benchRoots(b *testing.B, n int) []string {
	b.Helper()
	base := b.TempDir()
	var dirs []string
	for r := range 3 {
		root := filepath.Join(base, fmt.Sprintf("root%d", r))
		for i := range n {
			dir := filepath.Join(root, "skills", fmt.Sprintf("skill-%05d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			md := fmt.Sprintf("---\nname: skill-%05d\ndescription: Skill %d of root %d, for benchmarks.\n---\n# Skill %d\n\nDo the thing carefully.\n", i, i, r, i)
			if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "ref.md"), []byte("Reference material.\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		dirs = append(dirs, root)
	}
	return dirs
}

func BenchmarkResolveRender(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			dirs := benchRoots(b, n)
			b.ResetTimer()
			for b.Loop() {
				in := Input{Activate: []Activation{{Skill: "skill-00000", Files: []string{"ref.md"}}}}
				for i, d := range dirs {
					root, _, err := LoadDirRoot(fmt.Sprintf("root%d", i), d, DirOptions{})
					if err != nil {
						b.Fatal(err)
					}
					in.Roots = append(in.Roots, root)
				}
				if _, err := Publish(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadFiles(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			dirs := benchRoots(b, n)
			b.ResetTimer()
			for b.Loop() {
				var total int
				for _, d := range dirs {
					err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
						if err != nil || e.IsDir() {
							return err
						}
						c, err := os.ReadFile(p)
						total += len(c)
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				if total == 0 {
					b.Fatal("read nothing")
				}
			}
		})
	}
}
