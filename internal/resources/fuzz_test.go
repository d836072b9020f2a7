package resources

import (
	"testing"
)

// Fuzz targets for every parser (every parser is fuzzed; CONTRIBUTING.md). Seeds live in testdata/fuzz.
// Each asserts no panic and determinism, plus the parser's invariant.

func FuzzRender(f *testing.F) { // R-TPL-1, R-TPL-2
	f.Add("Review {{file}} for {{owner}}. Focus on {{file}}.", "v")
	f.Fuzz(func(t *testing.T, body, value string) {
		args := map[string]string{}
		for _, v := range Variables(body) {
			args[v] = value
		}
		out1, err1 := RenderTemplate(body, args)
		out2, err2 := RenderTemplate(body, args)
		if err1 != nil || err2 != nil || out1 != out2 {
			t.Fatalf("render(%q) = %q, %v / %q, %v", body, out1, err1, out2, err2)
		}
		// Oracle: one literal replacement pass over the same matches.
		if want := placeholder.ReplaceAllLiteralString(body, value); out1 != want {
			t.Fatalf("render(%q) = %q, want %q", body, out1, want)
		}
		if vars := Variables(body); len(vars) > 0 {
			delete(args, vars[0])
			if _, err := RenderTemplate(body, args); err == nil {
				t.Fatalf("missing %q was not an error", vars[0])
			}
		}
	})
}
