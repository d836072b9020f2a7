package resources

import (
	"strings"
	"testing"
)

// Issue 11 item 7: YAML 1.1 turned `name: y` into "true" and `name: no` into
// "false"; the Pi agent and the Agent Skills spec read YAML 1.2.
func TestParseFrontmatter_YAML12ScalarsStayStrings(t *testing.T) {
	for in, want := range map[string]string{"y": "y", "no": "no", "yes": "yes", "on": "on", "off": "off", "true": "true", "42": "42", "1.5": "1.5"} {
		fm, _, err := parseFrontmatter("---\nname: " + in + "\ndescription: d\n---\nbody\n")
		if err != nil {
			t.Fatalf("name: %s: %v", in, err)
		}
		if string(fm.Name) != want {
			t.Errorf("name: %s parsed as %q, want %q", in, fm.Name, want)
		}
	}
}

func TestParseFrontmatter_OversizedHeaderIsRefusedNamingTheLimit(t *testing.T) {
	header := "description: " + strings.Repeat("a", MaxFrontmatterBytes) + "\n"
	_, _, err := parseFrontmatter("---\nname: big\n" + header + "---\nbody\n")
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("want an over-the-limit error, got %v", err)
	}
}

func TestParseFrontmatter_NonMappingHeaderIsAnError(t *testing.T) {
	for _, header := range []string{"- a\n- b\n", "just text\n", "{1: a}\n"} {
		if _, _, err := parseFrontmatter("---\n" + header + "---\nbody\n"); err == nil {
			t.Errorf("header %q: want an error", header)
		}
	}
}

func TestParseFrontmatter_ListsAndMetadataStillParse(t *testing.T) {
	fm, body, err := parseFrontmatter("---\nname: s\ndescription: d\nallowed-tools: [bash, read]\nmetadata:\n  owner: no\n---\nbody\n")
	if err != nil {
		t.Fatal(err)
	}
	if body != "body" || len(fm.AllowedTools) != 2 || fm.metadata()["owner"] != "no" {
		t.Fatalf("got %+v body %q", fm, body)
	}
}
