package jsonindent

import (
	"bytes"
	"encoding/json"
	"testing"
)

// indentSeeds are JSON documents with what Append must copy exactly:
// escaped quotes and backslashes at string ends, punctuation inside strings,
// empty and nested containers, numbers and literals.
var indentSeeds = []string{
	`{"a":"b","c":[1,2,{"d":null}],"e":{},"f":[],"g":true,"h":false}`,
	`{"k":"a \"quoted\" {word}, [list]: yes","l":"ends with a backslash \\","m":"\\\"","n":"\\\\"}`,
	`[[],[{}],[[[]]],{"":""},-1.5e+10,0,"\u003c\u2028"]`,
	`"just a string"`,
	`42`,
	`{"body":"line one\nline two\ttabbed, \"quoted\" \\ and done"}`,
	`[{"a":[{"b":[]}]},{"c":"x"}]`,
}

func TestAppend_MatchesJSONIndent(t *testing.T) {
	for _, doc := range indentSeeds {
		checkMatchesJSONIndent(t, []byte(doc))
	}
}

func FuzzAppendMatchesJSONIndent(f *testing.F) {
	for _, doc := range indentSeeds {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			t.Fatal(err)
		}
		checkMatchesJSONIndent(t, compact.Bytes())
	})
}

func checkMatchesJSONIndent(t *testing.T, compact []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, compact, "", "  "); err != nil {
		t.Fatalf("%s: %v", compact, err)
	}
	if got := Append(nil, compact, "  "); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s:\ngot  %s\nwant %s", compact, got, want.Bytes())
	}
}

// TestEncode_MatchesJSONEncoder: Encode writes what a json.Encoder set to
// indent without escaping HTML writes, trailing newline included.
func TestEncode_MatchesJSONEncoder(t *testing.T) {
	v := map[string]any{
		"html":  "<b>&amp;</b>",
		"list":  []any{"a", 1, nil, map[string]any{}},
		"empty": []string{},
		"text":  "a \"quote\", a \\ backslash",
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	got, err := Encode(v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("got\n%s\nwant\n%s", got, want.Bytes())
	}
}
