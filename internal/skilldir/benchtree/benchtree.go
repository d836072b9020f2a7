// Package benchtree writes the directory tree the resolution benchmarks use
// and measures one pass over it, so the Go benchmarks of internal/resources
// and the scale harness (test/bench) time exactly the same work.
package benchtree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skilldir"
)

// WriteTree writes 3 roots of n skills in the layout
// (root<i>/skills/skill-NNNNN/SKILL.md with
// frontmatter, plus ref.md), which is also Pi's layout: a skills directory
// of <name>/SKILL.md whose frontmatter name equals the directory name. The
// same names appear in every root, so two thirds are shadowed (Loadout) or
// collide (Pi). It returns the three root directories.
func WriteTree(base string, n int) ([]string, error) {
	var roots []string
	for r := range 3 {
		root := filepath.Join(base, fmt.Sprintf("root%d", r))
		for i := range n {
			dir := filepath.Join(root, "skills", fmt.Sprintf("skill-%05d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			md := fmt.Sprintf("---\nname: skill-%05d\ndescription: Skill %d of root %d, for benchmarks.\n---\n# Skill %d\n\nDo the thing carefully.\n", i, i, r, i)
			if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "ref.md"), []byte("Reference material.\n"), 0o644); err != nil {
				return nil, err
			}
		}
		roots = append(roots, root)
	}
	return roots, nil
}

// LoadoutResolve is one pass of what BenchmarkResolveRender measures: load
// the three directory roots (read, parse, validate) and Publish (resolve,
// activate, render, encode, hash). It returns the number of winning skills.
func LoadoutResolve(roots []string) (int, error) {
	in := resources.Input{Activate: []resources.Activation{{Skill: "skill-00000", Files: []string{"ref.md"}}}}
	for i, d := range roots {
		root, _, err := skilldir.LoadRoot(fmt.Sprintf("root%d", i), d, skilldir.Options{})
		if err != nil {
			return 0, err
		}
		in.Roots = append(in.Roots, root)
	}
	res, err := resources.Render(in)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range res.Manifest.Catalog {
		if e.Kind == resources.KindSkill {
			n++
		}
	}
	return n, nil
}

// ReadOnly walks the roots and reads every file: the floor.
func ReadOnly(roots []string) (int, error) {
	total := 0
	for _, d := range roots {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			c, err := os.ReadFile(p)
			total += len(c)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}
