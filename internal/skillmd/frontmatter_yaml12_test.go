package skillmd

import (
	"strings"
	"testing"
)

// YAML 1.1 turned `name: y` into "true" and `name: no` into
// "false"; the Pi agent and the Agent Skills spec read YAML 1.2.
func TestParseFrontmatter_YAML12ScalarsStayStrings(t *testing.T) {
	for in, want := range map[string]string{"y": "y", "no": "no", "yes": "yes", "on": "on", "off": "off", "true": "true", "42": "42", "1.5": "1.5"} {
		fm, _, err := Parse("---\nname: " + in + "\ndescription: d\n---\nbody\n")
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
	_, _, err := Parse("---\nname: big\n" + header + "---\nbody\n")
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("want an over-the-limit error, got %v", err)
	}
}

func TestParseFrontmatter_NonMappingHeaderIsAnError(t *testing.T) {
	for _, header := range []string{"- a\n- b\n", "just text\n", "{1: a}\n"} {
		if _, _, err := Parse("---\n" + header + "---\nbody\n"); err == nil {
			t.Errorf("header %q: want an error", header)
		}
	}
}

func TestParseFrontmatter_ListsAndMetadataStillParse(t *testing.T) {
	fm, body, err := Parse("---\nname: s\ndescription: d\nallowed-tools: [bash, read]\nmetadata:\n  owner: no\n---\nbody\n")
	if err != nil {
		t.Fatal(err)
	}
	if body != "body" || len(fm.AllowedTools) != 2 || fm.MetadataMap()["owner"] != "no" {
		t.Fatalf("got %+v body %q", fm, body)
	}
}

// TestSetDescription_ReplacesOnlyTheDescription: the re-encoded frontmatter
// parses to the same fields with the new description, and the body after the
// closing line is kept byte for byte.
func TestSetDescription_ReplacesOnlyTheDescription(t *testing.T) {
	body := "\n# Title\n\nBody with --- and trailing spaces   \n"
	in := "---\nname: docx\ndescription: >-\n  A long\n  folded one.\nlicense: MIT # a comment\nmetadata:\n  owner: team-a\nallowed-tools: [Read, Grep]\n---" + body
	cut := strings.Repeat("é", 1024)
	out, err := SetDescription([]byte(in), cut)
	if err != nil {
		t.Fatal(err)
	}
	fm, _, err := Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if string(fm.Description) != cut || fm.Name != "docx" || fm.License != "MIT" || fm.Metadata["owner"] != "team-a" || strings.Join(fm.AllowedTools, ",") != "Read,Grep" {
		t.Fatalf("frontmatter after SetDescription: %+v", fm)
	}
	if !strings.HasSuffix(string(out), "\n---"+body) {
		t.Fatalf("body not kept:\n%s", out)
	}
	if SkillDescription(out) != cut {
		t.Fatal("SkillDescription does not read the new description")
	}
	if _, err := SetDescription([]byte("no frontmatter"), "d"); err == nil {
		t.Fatal("SetDescription of a file without frontmatter succeeded")
	}
}
