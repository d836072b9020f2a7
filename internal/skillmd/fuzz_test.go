package skillmd

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzFrontmatter(f *testing.F) { // R-SK-1, R-SK-2
	f.Add("---\nname: review\ndescription: d\n---\nbody\n")
	f.Fuzz(func(t *testing.T, content string) {
		fm1, body1, err1 := Parse(content)
		fm2, body2, err2 := Parse(content)
		if (err1 == nil) != (err2 == nil) || body1 != body2 || !reflect.DeepEqual(fm1, fm2) {
			t.Fatalf("parse is not deterministic for %q", content)
		}
		if err1 == nil && !strings.Contains(content, body1) {
			t.Fatalf("body %q is not part of the input", body1)
		}
	})
}
