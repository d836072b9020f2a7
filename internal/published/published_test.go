package published

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// mountLikeKubelet lays data out as a ConfigMap volume does: files in a
// timestamped directory, ..data pointing at it, keys symlinked through ..data.
func mountLikeKubelet(t *testing.T, data map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, data)
	return dir
}

func TestPublishedContext_RenderActivateFromMountedConfigMap(t *testing.T) { // activation, templates, fixed example
	r, err := resources.Render(resourcestest.ExampleInput())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := LoadDir(mountLikeKubelet(t, r.Data))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := pc.Render("review", map[string]string{"file": "src/parser.ts", "owner": "runtime"}, time.UnixMilli(5))
	if err != nil || msg.Content[0].Text != "Review src/parser.ts for runtime. Focus on src/parser.ts." || msg.Role != "user" || msg.Timestamp != 5 {
		t.Fatalf("msg = %+v, err = %v", msg, err)
	}
	var te *resources.TemplateError
	if _, err := pc.Render("review", map[string]string{"file": "x"}, time.Now()); !errors.As(err, &te) || te.Variable != "owner" || te.Template != "review" {
		t.Fatalf("missing arg: err = %v", err)
	}
	a, err := pc.Activate("review", []string{"checklist.md", "checklist.md"})
	if err != nil || a.Body != resourcestest.ProjectBody || len(a.Files) != 1 || a.Files[0].Content != "CHECKLIST" {
		t.Fatalf("activate = %+v, %v", a, err)
	}
	b, _ := json.Marshal(a)
	resourcestest.MustContain(t, "activation JSON", string(b), `"name":"review"`, `"request":"checklist.md"`, `"source":"checklist.md"`)
	if _, err := pc.Activate("review", []string{"../x"}); err == nil {
		t.Fatal("traversal accepted")
	}
	m := pc.Manifest()
	m.Catalog[0].Name = "mutated"
	if pc.Manifest().Catalog[0].Name == "mutated" {
		t.Fatal("Manifest() shares its lists")
	}
}

func TestPublishedContext_InconsistentDataRefused(t *testing.T) { // R-CAT-6
	r, _ := resources.Render(resourcestest.ExampleInput())
	r.Data[contract.KeySkills] = strings.Replace(r.Data[contract.KeySkills], resourcestest.ProjectBody, "TAMPERED", 1)
	if _, err := Parse(r.Data); err == nil {
		t.Fatal("tampered data accepted")
	}
}

func TestPublishedContext_InstructionsTextIsThePromptsHead(t *testing.T) { // R-CTX-1
	for _, tc := range []struct {
		name         string
		instructions []resources.Instruction
		want         string
	}{
		{"two instructions", []resources.Instruction{{Body: "FIRST\n\n# Skills\n"}, {Body: "SECOND"}}, "FIRST\n\n# Skills\n\nSECOND"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := resourcestest.ExampleInput()
			in.Instructions = tc.instructions
			in.Roots[1].Instructions = nil
			pc := renderParsed(t, in)
			got, err := pc.InstructionsText()
			if err != nil || got != tc.want {
				t.Errorf("InstructionsText() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	pc := renderParsed(t, resourcestest.ExampleInput())
	// The tail does not matter: the instructions are sliced, not derived.
	pc.SystemPrompt = strings.Replace(pc.SystemPrompt, "CHECKLIST", "EDITED", 1)
	if got, err := pc.InstructionsText(); err != nil || got != "WORKSPACE-RULES" {
		t.Errorf("InstructionsText() = %q, %v", got, err)
	}
	pc.manifest.InstructionsLength = 3
	if _, err := pc.InstructionsText(); err == nil {
		t.Error("a length that does not end a part of the prompt gave instructions")
	}
}

func TestPublishedContext_InstructionsAreSlicedWithProvenance(t *testing.T) { // R-CTX-1
	in := resourcestest.ExampleInput()
	in.PlatformNamespaces = []string{"platform"}
	in.Instructions = append([]resources.Instruction{
		{Body: "\nPLATFORM RULES\n", Origin: resources.Origin{Root: "configmap", Namespace: "platform", Object: "org-rules/AGENTS.md"}},
		{Body: "\n\n", Origin: resources.Origin{Root: "workspace", Namespace: "team-a", Object: "dev/spec.instructions[1]"}},
	}, in.Instructions...)
	pc := renderParsed(t, in)
	got, err := pc.Instructions()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ body, authority, ns, kind, name, key string }{
		{"PLATFORM RULES", "platform", "platform", "ConfigMap", "org-rules", "AGENTS.md"},
		{"", "project", "team-a", "Workspace", "dev", "spec.instructions[1]"},
		{"WORKSPACE-RULES", "project", "team-a", "Workspace", "dev", ""},
	}
	if len(got) < len(want) {
		t.Fatalf("Instructions() = %+v", got)
	}
	for i, w := range want {
		p := got[i].Source.Provenance
		if got[i].Body != w.body || p.Authority != w.authority || p.Namespace != w.ns || p.Kind != w.kind || p.Name != w.name || p.Key != w.key {
			t.Errorf("instruction %d = %q %+v, want %+v", i, got[i].Body, p, w)
		}
	}
	pc.manifest.InstructionSources[0].Length = 1 << 20
	if _, err := pc.Instructions(); err == nil {
		t.Error("a range past the instructions was sliced")
	}
	pc.manifest.InstructionSources = nil
	if _, err := pc.Instructions(); err == nil {
		t.Error("a manifest without ranges gave instructions")
	}
}

// renderParsed renders in as the manager publishes it and parses the data
// back as hostd reads it.
func renderParsed(t *testing.T, in resources.Input) *Context {
	t.Helper()
	r, err := resources.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := Parse(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}
