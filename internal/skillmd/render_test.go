package skillmd

import (
	"maps"
	"slices"
	"testing"
)

// What Render writes, Parse reads back: one owner for both directions of the
// format, including allowed-tools entries that hold spaces (written as a
// list). Parse trims the blank line Render puts before the body, and its end.
func TestRender_ParseReadsBackEveryField(t *testing.T) {
	for _, tools := range [][]string{{"Bash(git:*)", "Read"}, {"Bash(git status)", "Read"}} {
		in := Fields{Name: "review", Description: "Reviews: carefully.", License: "MIT", Compatibility: "pi>=0.70",
			Metadata: map[string]string{"team": "a"}, AllowedTools: tools}
		b, err := Render(in, "BODY\n")
		if err != nil {
			t.Fatal(err)
		}
		fm, body, err := Parse(string(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if string(fm.Name) != in.Name || string(fm.Description) != in.Description || string(fm.License) != in.License ||
			string(fm.Compatibility) != in.Compatibility || !maps.Equal(fm.MetadataMap(), in.Metadata) ||
			!slices.Equal([]string(fm.AllowedTools), tools) || body != "BODY" || len(fm.Unknown) != 0 {
			t.Errorf("round trip of %+v:\n%s\nread %+v body %q", in, b, fm, body)
		}
	}
}
