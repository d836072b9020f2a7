package resources

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Every instruction's range in system-prompt.md holds exactly its body, and
// every instruction, catalog entry and prompt guide says where it came from
// and with whose authority.
func TestRender_ProvenanceAndInstructionRanges(t *testing.T) {
	in := exampleInput()
	in.PlatformNamespaces = []string{"loadout-system"}
	in.ExtensionNamespaces = map[string]string{"platform-guard": "loadout-system", "team-notes": "team-a"}
	in.Registry.PromptGuides = []contract.PromptGuide{{Extension: "platform-guard", Text: "PLATFORM-GUIDE"}, {Extension: "team-notes", Text: "TEAM-GUIDE"}}
	in.Instructions = []Instruction{
		{Body: "\nPLATFORM-RULES\n\n", Origin: Origin{Root: "configmap", Namespace: "loadout-system", Object: "org/AGENTS.md"}},
		{Body: "", Origin: Origin{Root: "workspace", Namespace: "team-a", Object: "dev/spec.instructions[1]"}},
		{Body: "TENANT-RULES", Origin: Origin{Root: "workspace", Namespace: "team-a", Object: "dev/spec.instructions[2]"}},
	}
	r, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	prompt, m := r.Data[contract.KeySystemPrompt], r.Manifest
	if got := prompt[:m.InstructionsLength]; got != "PLATFORM-RULES\n\nTENANT-RULES" {
		t.Fatalf("instructions head = %q", got)
	}
	want := []struct {
		body string
		p    contract.Provenance
	}{
		{"PLATFORM-RULES", contract.Provenance{Authority: "platform", Namespace: "loadout-system", Kind: "ConfigMap", Name: "org", Key: "AGENTS.md"}},
		{"", contract.Provenance{Authority: "project", Namespace: "team-a", Kind: "Workspace", Name: "dev", Key: "spec.instructions[1]"}},
		{"TENANT-RULES", contract.Provenance{Authority: "project", Namespace: "team-a", Kind: "Workspace", Name: "dev", Key: "spec.instructions[2]"}},
	}
	if len(m.InstructionSources) != len(want) {
		t.Fatalf("instructionSources = %+v", m.InstructionSources)
	}
	for i, w := range want {
		s := m.InstructionSources[i]
		if body, ok := s.Slice(prompt); !ok || body != w.body || s.Provenance != w.p || s.Origin != m.Instructions[i] {
			t.Errorf("instruction %d: %q %+v, want %q %+v", i, body, s, w.body, w.p)
		}
	}
	for _, e := range m.Catalog {
		if e.Provenance.Authority != contract.AuthorityProject || e.Provenance.Namespace != "team-a" || e.Provenance.Kind != contract.ProvenanceObject || e.Provenance.Root != "project" {
			t.Errorf("catalog %s %s: provenance %+v", e.Kind, e.Name, e.Provenance)
		}
	}
	guides := map[string]string{}
	for _, g := range m.PromptGuides {
		guides[g.Extension] = g.Provenance.Authority + "/" + g.Provenance.Namespace
	}
	if !maps.Equal(guides, map[string]string{"platform-guard": "platform/loadout-system", "team-notes": "project/team-a"}) {
		t.Errorf("guide provenance = %v", guides)
	}
	// The published manifest carries it, and the same input gives the same bytes.
	var published contract.Manifest
	if err := json.Unmarshal([]byte(r.Data[contract.KeyManifest]), &published); err != nil || published.InstructionsLength != m.InstructionsLength || len(published.InstructionSources) != 3 {
		t.Fatalf("published manifest: %v %+v", err, published.InstructionSources)
	}
	again, err := Render(in)
	if err != nil || !maps.Equal(again.Data, r.Data) {
		t.Fatalf("render is not deterministic: %v", err)
	}
	// A platform namespace's skill is platform text; a directory root's
	// file is always project text.
	if p := ProvenanceOf(Origin{Root: "platform", Namespace: "loadout-system", Object: "review"}, in.PlatformNamespaces); p.Authority != contract.AuthorityPlatform {
		t.Errorf("platform skill: %+v", p)
	}
	if p := ProvenanceOf(Origin{Root: "repo", Path: "AGENTS.md"}, in.PlatformNamespaces); p != (contract.Provenance{Authority: "project", Kind: "File", Name: "AGENTS.md", Root: "repo"}) {
		t.Errorf("directory file: %+v", p)
	}
}
