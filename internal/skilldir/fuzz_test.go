package skilldir

import (
	"path"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources"
)

func FuzzContainment(f *testing.F) { // R-ACT-4 (a)
	f.Add("checklist.md")
	f.Fuzz(func(t *testing.T, req string) {
		c1, err1 := resources.CleanRequest(req)
		c2, err2 := resources.CleanRequest(req)
		if c1 != c2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("not deterministic for %q", req)
		}
		if err1 != nil {
			return
		}
		if path.IsAbs(c1) || c1 == ".." || strings.HasPrefix(c1, "../") || c1 == "." {
			t.Fatalf("resources.CleanRequest(%q) = %q escapes", req, c1)
		}
		if !within("/srv/review", path.Join("/srv/review", c1)) {
			t.Fatalf("resources.CleanRequest(%q) = %q is outside lexically", req, c1)
		}
	})
}
