package resources

import (
	"path"
	"reflect"
	"strings"
	"testing"
)

// Fuzz targets for every parser (STYLE 19). Seeds live in testdata/fuzz.
// Each asserts no panic and determinism, plus the parser's invariant.

func FuzzFrontmatter(f *testing.F) { // R-SK-1, R-SK-2
	f.Add("---\nname: review\ndescription: d\n---\nbody\n")
	f.Fuzz(func(t *testing.T, content string) {
		fm1, body1, err1 := parseFrontmatter(content)
		fm2, body2, err2 := parseFrontmatter(content)
		if (err1 == nil) != (err2 == nil) || body1 != body2 || !reflect.DeepEqual(fm1, fm2) {
			t.Fatalf("parse is not deterministic for %q", content)
		}
		if err1 == nil && !strings.Contains(content, body1) {
			t.Fatalf("body %q is not part of the input", body1)
		}
	})
}

func FuzzRender(f *testing.F) { // R-TPL-1, R-TPL-2
	f.Add("Review {{file}} for {{owner}}. Focus on {{file}}.", "v")
	f.Fuzz(func(t *testing.T, body, value string) {
		args := map[string]string{}
		for _, v := range Variables(body) {
			args[v] = value
		}
		out1, err1 := Render(body, args)
		out2, err2 := Render(body, args)
		if err1 != nil || err2 != nil || out1 != out2 {
			t.Fatalf("render(%q) = %q, %v / %q, %v", body, out1, err1, out2, err2)
		}
		// Oracle: one literal replacement pass over the same matches.
		if want := placeholder.ReplaceAllLiteralString(body, value); out1 != want {
			t.Fatalf("render(%q) = %q, want %q", body, out1, want)
		}
		if vars := Variables(body); len(vars) > 0 {
			delete(args, vars[0])
			if _, err := Render(body, args); err == nil {
				t.Fatalf("missing %q was not an error", vars[0])
			}
		}
	})
}

func FuzzContainment(f *testing.F) { // R-ACT-4 (a)
	f.Add("checklist.md")
	f.Fuzz(func(t *testing.T, req string) {
		c1, err1 := cleanRequest(req)
		c2, err2 := cleanRequest(req)
		if c1 != c2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("not deterministic for %q", req)
		}
		if err1 != nil {
			return
		}
		if path.IsAbs(c1) || c1 == ".." || strings.HasPrefix(c1, "../") || c1 == "." {
			t.Fatalf("cleanRequest(%q) = %q escapes", req, c1)
		}
		if !within("/srv/review", path.Join("/srv/review", c1)) {
			t.Fatalf("cleanRequest(%q) = %q is outside lexically", req, c1)
		}
	})
}
