package skillmd

import "testing"

func TestFrontmatterObject_EveryFieldTheAuthorWrote(t *testing.T) {
	got, err := FrontmatterObject("---\nname: refunds\ndescription: no\nlicense: Apache-2.0\nversion: 1.0\nmetadata:\n  team: billing\nx-custom: [a, b]\n---\n\nBody\n")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"description":"no","license":"Apache-2.0","metadata":{"team":"billing"},"name":"refunds","version":1,"x-custom":["a","b"]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestFrontmatterObject_Refusals(t *testing.T) {
	for name, doc := range map[string]string{
		"no frontmatter": "# Just a body\n",
		"not a mapping":  "---\n- a\n- b\n---\nbody\n",
		"invalid YAML":   "---\nname: [unclosed\n---\nbody\n",
	} {
		if _, err := FrontmatterObject(doc); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	got, err := FrontmatterObject("---\n---\nbody\n")
	if err != nil || string(got) != "{}" {
		t.Fatalf("empty frontmatter: %s, %v", got, err)
	}
}
