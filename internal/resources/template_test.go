package resources

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestTemplate_ReplacesEveryOccurrence(t *testing.T) { // R-TPL-1, fixed example
	got, err := RenderTemplate("Review {{file}} for {{owner}}. Focus on {{file}}.", map[string]string{"file": "src/parser.ts", "owner": "runtime"})
	if err != nil || got != "Review src/parser.ts for runtime. Focus on src/parser.ts." {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestTemplate_OtherBraceShapesStayLiteral(t *testing.T) { // R-TPL-1
	body := "{{ name }} {{1x}} {name} {{a-b}} {{{x}}} {{x}"
	got, err := RenderTemplate(body, map[string]string{"name": "N", "x": "X"})
	if err != nil || got != "{{ name }} {{1x}} {name} {{a-b}} {X} {{x}" {
		t.Fatalf("got %q, %v", got, err)
	}
	if v := Variables(body); !slices.Equal(v, []string{"x"}) {
		t.Fatalf("variables = %v", v)
	}
}

func TestTemplate_VariablesDistinctInOrder(t *testing.T) { // R-TPL-1
	if v := Variables("{{b}} {{a}} {{b}} {{_c1}}"); !slices.Equal(v, []string{"b", "a", "_c1"}) {
		t.Fatalf("variables = %v", v)
	}
}

func TestTemplate_MissingArgumentNamesVariableExtraIgnored(t *testing.T) { // R-TPL-2
	_, err := RenderTemplate("Review {{file}} for {{owner}}.", map[string]string{"file": "f", "extra": "x"})
	var te *TemplateError
	if !errors.As(err, &te) || te.Variable != "owner" {
		t.Fatalf("err = %v, want a TemplateError naming owner", err)
	}
}

func TestTemplate_ArgumentsAreNotRescanned(t *testing.T) { // R-TPL-1
	got, _ := RenderTemplate("{{a}}", map[string]string{"a": "{{a}}"})
	if got != "{{a}}" {
		t.Fatalf("got %q", got)
	}
}

func TestTemplate_ResultIsCanonicalUserMessage(t *testing.T) { // R-TPL-3, R-TPL-4
	at := time.UnixMilli(1700000000123)
	b, err := json.Marshal(NewUserMessage("hi", at))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1700000000123}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
