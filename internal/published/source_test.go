package published

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// testDigest is a well-formed digest; nothing is fetched in these tests.
const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// docxBody is the external skill's body, absent from what is published.
const docxBody = "DOCX-BODY: use scripts/pack.py.\n\nSecond paragraph."

func ociSource(repo string) *contract.SkillSource {
	return &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/acme/" + repo + "@" + testDigest}}
}

func docxSkillMD() []byte {
	return []byte("---\nname: docx\ndescription: Edits Word documents.\nlicense: Proprietary\n---\n\n" + docxBody + "\n\n")
}

func publishWith(t *testing.T, docx resources.Skill) *resources.Result {
	t.Helper()
	root := resources.Root{Name: "platform", Skills: []resources.Skill{docx,
		{Name: "lint", Description: "Lint.", Body: "LINT", Origin: resources.Origin{Root: "platform", Namespace: "p", Object: "lint"}}}}
	res, err := resources.Render(resources.Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        []resources.Root{root},
		Instructions: []resources.Instruction{{Body: "Be careful.", Origin: resources.Origin{Root: "workspace"}}},
		Activate:     []resources.Activation{{Skill: "docx", Files: []string{"reference.md", "./notes/empty.md"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExternalSkill_ActiveBodyReachesPromptAgentSide proves the
// "always-active external skill": the controller publishes markers only, and
// the agent side, given the fetched SKILL.md and files, serves exactly the
// system prompt the controller would have built for the same skill inline.
func TestExternalSkill_ActiveBodyReachesPromptAgentSide(t *testing.T) {
	origin := resources.Origin{Root: "platform", Namespace: "p", Object: "docx"}
	files := []resources.File{{Path: "notes/empty.md", Content: []byte("")}, {Path: "reference.md", Content: []byte("REFERENCE\n\n")}}
	inline := publishWith(t, resources.Skill{Name: "docx", Description: "Edits Word documents.", Body: docxBody, Files: files, Origin: origin})
	external := publishWith(t, resources.Skill{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin})

	prompt := external.Data[contract.KeySystemPrompt]
	resourcestest.MustNotContain(t, "published prompt", prompt, "DOCX-BODY", "REFERENCE")
	resourcestest.MustContain(t, "published prompt", prompt, resources.BodyMarker("docx"), resources.FileMarker("docx", "reference.md"))
	resourcestest.MustNotContain(t, "skills.json", external.Data[contract.KeySkills], "DOCX-BODY")
	resourcestest.MustContain(t, "skills.json", external.Data[contract.KeySkills], `"source":{"oci":{"reference":"ghcr.io/acme/docx@`+testDigest)

	pc, err := Parse(external.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Activate("docx", nil); err == nil || !strings.Contains(err.Error(), "not fetched") {
		t.Fatalf("activate before fetch: %v, want not fetched", err)
	}
	full, err := pc.WithExternal(map[string]resources.ExternalSkill{"docx": {SkillMD: docxSkillMD(), Files: files}})
	if err != nil {
		t.Fatal(err)
	}
	if want := inline.Data[contract.KeySystemPrompt]; full.SystemPrompt != want {
		t.Fatalf("agent-side prompt differs from the inline one:\n got %q\nwant %q", full.SystemPrompt, want)
	}
	a, err := full.Activate("docx", []string{"reference.md"})
	if err != nil || a.Body != docxBody || a.Files[0].Content != "REFERENCE\n\n" {
		t.Fatalf("activate after fetch = %+v, %v", a, err)
	}
}

func TestExternalSkill_DisagreeingSkillMDIsRefused(t *testing.T) {
	origin := resources.Origin{Root: "platform", Namespace: "p", Object: "docx"}
	res := publishWith(t, resources.Skill{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin})
	pc, err := Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	for name, md := range map[string]string{
		"other name":        "---\nname: pdf\ndescription: Edits Word documents.\n---\nx",
		"other description": "---\nname: docx\ndescription: Something else.\n---\nx",
		"no frontmatter":    "just text",
	} {
		if _, err := pc.WithExternal(map[string]resources.ExternalSkill{"docx": {SkillMD: []byte(md), Files: []resources.File{{Path: "reference.md"}, {Path: "notes/empty.md"}}}}); err == nil || !strings.Contains(err.Error(), "skill docx") {
			t.Errorf("%s: got %v, want an error naming skill docx", name, err)
		}
	}
	// A requested file the source lacks is refused, not left as a marker.
	if _, err := pc.WithExternal(map[string]resources.ExternalSkill{"docx": {SkillMD: docxSkillMD()}}); err == nil || !strings.Contains(err.Error(), "reference.md") {
		t.Errorf("missing requested file: got %v", err)
	}
}

// hostd serves a context before its sources arrive: with some external
// skills fetched and others not, the fetched ones activate and reach the
// prompt, the pending ones answer "not fetched yet" and keep their markers,
// and the instructions still read back exactly.
func TestExternalSkill_PendingSkillsDelayOnlyThemselves(t *testing.T) {
	origin := resources.Origin{Root: "platform", Namespace: "p", Object: "docx"}
	root := resources.Root{Name: "platform", Skills: []resources.Skill{
		{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin},
		{Name: "pdf", Description: "Reads PDFs.", Source: ociSource("pdf"), Origin: resources.Origin{Root: "platform", Namespace: "p", Object: "pdf"}},
	}}
	res, err := resources.Render(resources.Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        []resources.Root{root},
		Instructions: []resources.Instruction{{Body: "Be careful.", Origin: resources.Origin{Root: "workspace"}}},
		Activate:     []resources.Activation{{Skill: "docx", Files: []string{"reference.md"}}, {Skill: "pdf"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	files := []resources.File{{Path: "reference.md", Content: []byte("REFERENCE\n")}}
	part, rejected := pc.WithAvailableExternal(map[string]resources.ExternalSkill{"docx": {SkillMD: docxSkillMD(), Files: files}})
	if len(rejected) != 0 {
		t.Fatalf("rejected %v", rejected)
	}
	resourcestest.MustContain(t, "partial prompt", part.SystemPrompt, "DOCX-BODY", "REFERENCE", resources.BodyMarker("pdf"))
	resourcestest.MustNotContain(t, "partial prompt", part.SystemPrompt, resources.BodyMarker("docx"))
	if a, err := part.Activate("docx", nil); err != nil || a.Body != docxBody {
		t.Fatalf("fetched skill: %+v, %v", a, err)
	}
	if _, err := part.Activate("pdf", nil); err == nil || !strings.Contains(err.Error(), "not fetched yet") {
		t.Fatalf("pending skill: %v", err)
	}
	// What the context holds is what hostd materializes and lists over MCP.
	for _, c := range []struct {
		pc    *Context
		skill string
		want  bool
	}{{part, "docx", true}, {part, "pdf", false}, {pc, "docx", false}, {part, "no-such-skill", false}} {
		if got := c.pc.Holds(c.skill); got != c.want {
			t.Errorf("Holds(%s) = %v, want %v", c.skill, got, c.want)
		}
	}
	if got, err := part.InstructionsText(); err != nil || got != "Be careful." {
		t.Fatalf("instructions with a pending skill = %q, %v", got, err)
	}
	if _, err := part.WithExternal(nil); err == nil || !strings.Contains(err.Error(), "skill docx") {
		t.Fatalf("WithExternal still needs every source: %v", err)
	}

	// A SKILL.md that disagrees with its resources.Skill leaves only that skill pending.
	bad, rejected := pc.WithAvailableExternal(map[string]resources.ExternalSkill{
		"docx": {SkillMD: docxSkillMD(), Files: files},
		"pdf":  {SkillMD: []byte("---\nname: pdf\ndescription: Something else.\n---\nx")},
	})
	if err := rejected["pdf"]; err == nil || !strings.Contains(err.Error(), "skill pdf") || len(rejected) != 1 {
		t.Fatalf("rejected = %v, want only pdf", rejected)
	}
	if _, err := bad.Activate("docx", nil); err != nil {
		t.Fatalf("docx held up by pdf: %v", err)
	}
	if bad.Holds("pdf") {
		t.Error("Holds(pdf) with content that disagrees with its Skill")
	}
}
