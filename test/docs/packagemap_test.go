package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The product's Go code lives under these roots; every package under them
// needs a row in the package map. hack/, samples/ and test/ hold tools,
// examples and suites, which the map may name as groups.
var productRoots = []string{"api", "cmd", "controllers", "internal"}

// goPackages lists the directories under root (relative to the repository)
// that hold at least one non-test Go file.
func goPackages(t *testing.T, roots ...string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join(repoRoot, root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				rel, _ := filepath.Rel(repoRoot, filepath.Dir(path))
				set[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for p := range set {
			if !yield(p) {
				return
			}
		}
	})
}

var (
	packagesSection = regexp.MustCompile(`(?ms)^## Packages\n(.*?)(?:^## |\z)`)
	tableRow        = regexp.MustCompile("(?m)^\\|([^|\n]*)\\|")
	backticked      = regexp.MustCompile("`([^`]+)`")
)

// mappedPackages returns the paths named in the first column of
// docs/architecture.md's package table.
func mappedPackages(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := packagesSection.FindSubmatch(data)
	if section == nil {
		t.Fatal("docs/architecture.md has no \"## Packages\" section: it is the one package map")
	}
	var named []string
	for _, row := range tableRow.FindAllSubmatch(section[1], -1) {
		for _, m := range backticked.FindAllSubmatch(row[1], -1) {
			named = append(named, string(m[1]))
		}
	}
	if len(named) < 20 {
		t.Fatalf("the package map names only %d packages: the table no longer parses", len(named))
	}
	return named
}

// TestPackageMap_NamesEveryProductPackageAndOnlyRealOnes keeps
// docs/architecture.md the one true package map: a new package without a row,
// or a row for a package that was moved or deleted, fails.
func TestPackageMap_NamesEveryProductPackageAndOnlyRealOnes(t *testing.T) {
	named := mappedPackages(t)
	for _, name := range named {
		matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(name)))
		if err != nil || len(matches) == 0 {
			t.Errorf("docs/architecture.md names %s, which does not exist", name)
		}
	}
	for _, pkg := range goPackages(t, productRoots...) {
		if !slices.Contains(named, pkg) {
			t.Errorf("package %s has no row in docs/architecture.md's package map", pkg)
		}
	}
}
