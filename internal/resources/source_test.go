package resources

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func ociSource(repo string) *contract.SkillSource {
	return &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/acme/" + repo + "@" + testDigest}}
}

// docxBody and its files are the content an external "docx" skill fetches.
const docxBody = "DOCX-BODY: use scripts/pack.py.\n\nSecond paragraph."

func docxSkillMD() []byte {
	return []byte("---\nname: docx\ndescription: Edits Word documents.\nlicense: Proprietary\n---\n\n" + docxBody + "\n\n")
}

func publishWith(t *testing.T, docx Skill) *Result {
	t.Helper()
	root := Root{Name: "platform", Skills: []Skill{docx,
		{Name: "lint", Description: "Lint.", Body: "LINT", Origin: Origin{Root: "platform", Namespace: "p", Object: "lint"}}}}
	res, err := Publish(Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        []Root{root},
		Instructions: []Instruction{{Body: "Be careful.", Origin: Origin{Root: "workspace"}}},
		Activate:     []Activation{{Skill: "docx", Files: []string{"reference.md", "./notes/empty.md"}}},
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
	origin := Origin{Root: "platform", Namespace: "p", Object: "docx"}
	files := []File{{Path: "notes/empty.md", Content: ""}, {Path: "reference.md", Content: "REFERENCE\n\n"}}
	inline := publishWith(t, Skill{Name: "docx", Description: "Edits Word documents.", Body: docxBody, Files: files, Origin: origin})
	external := publishWith(t, Skill{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin})

	prompt := external.Data[contract.KeySystemPrompt]
	mustNotContain(t, "published prompt", prompt, "DOCX-BODY", "REFERENCE")
	mustContain(t, "published prompt", prompt, bodyMarker("docx"), fileMarker("docx", "reference.md"))
	mustNotContain(t, "skills.json", external.Data[contract.KeySkills], "DOCX-BODY")
	mustContain(t, "skills.json", external.Data[contract.KeySkills], `"source":{"oci":{"reference":"ghcr.io/acme/docx@`+testDigest)

	pc, err := ParseContext(external.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Activate("docx", nil); err == nil || !strings.Contains(err.Error(), "not fetched") {
		t.Fatalf("activate before fetch: %v, want not fetched", err)
	}
	full, err := pc.WithExternal(map[string]ExternalSkill{"docx": {SkillMD: docxSkillMD(), Files: files}})
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
	origin := Origin{Root: "platform", Namespace: "p", Object: "docx"}
	res := publishWith(t, Skill{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin})
	pc, err := ParseContext(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	for name, md := range map[string]string{
		"other name":        "---\nname: pdf\ndescription: Edits Word documents.\n---\nx",
		"other description": "---\nname: docx\ndescription: Something else.\n---\nx",
		"no frontmatter":    "just text",
	} {
		if _, err := pc.WithExternal(map[string]ExternalSkill{"docx": {SkillMD: []byte(md), Files: []File{{Path: "reference.md"}, {Path: "notes/empty.md"}}}}); err == nil || !strings.Contains(err.Error(), "skill docx") {
			t.Errorf("%s: got %v, want an error naming skill docx", name, err)
		}
	}
	// A requested file the source lacks is refused, not left as a marker.
	if _, err := pc.WithExternal(map[string]ExternalSkill{"docx": {SkillMD: docxSkillMD()}}); err == nil || !strings.Contains(err.Error(), "reference.md") {
		t.Errorf("missing requested file: got %v", err)
	}
}

func TestValidateSkill_SourceRulesMirrorTheCRD(t *testing.T) {
	commit := strings.Repeat("a", 40)
	cases := map[string]Skill{
		"tag":            {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/a/b:v1"}}},
		"tag and digest": {Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/a/b:v1@" + testDigest}}},
		"both":           {Source: &contract.SkillSource{OCI: ociSource("x").OCI, Git: &contract.GitSource{URL: "https://x/y", Commit: commit}}},
		"neither":        {Source: &contract.SkillSource{}},
		"branch":         {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: "main"}}},
		"http":           {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "http://x/y", Commit: commit}}},
		"file":           {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "file:///etc", Commit: commit}}},
		"escaping path":  {Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: commit, Path: "../x"}}},
		"with body":      {Source: ociSource("x"), Body: "x"},
	}
	for name, s := range cases {
		s.Name, s.Description = "a", "d"
		if err := validateSkill(s, true); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := Skill{Name: "a", Description: "d", Source: &contract.SkillSource{Git: &contract.GitSource{URL: "https://x/y", Commit: commit, Path: "skills/pdf"}}}
	if err := validateSkill(ok, true); err != nil {
		t.Errorf("valid git source refused: %v", err)
	}
}

// TestDirRoot_BinaryAndExecutableFilesAreKept: a directory skill's font and
// script reach skills.json (base64 and executable) instead of being dropped.
func TestDirRoot_BinaryAndExecutableFilesAreKept(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"skills/canvas/SKILL.md": skillMD("canvas", "Draws.", "Draw.")})
	font := []byte{0, 1, 2, 0xff, 0xfe, 'x'}
	if err := os.WriteFile(filepath.Join(dir, "skills/canvas/font.ttf"), font, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills/canvas/run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, diags, err := LoadDirRoot("project", dir, DirOptions{})
	if err != nil || len(diags) != 0 {
		t.Fatalf("load: %v %v", diags, err)
	}
	res, err := Publish(Input{Roots: []Root{root}})
	if err != nil {
		t.Fatal(err)
	}
	var doc contract.Skills
	if err := json.Unmarshal([]byte(res.Data[contract.KeySkills]), &doc); err != nil {
		t.Fatal(err)
	}
	got, err := SkillFiles(doc.Skills[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != "font.ttf" || !bytes.Equal([]byte(got[0].Content), font) || !got[0].Binary ||
		got[1].Path != "run.sh" || !got[1].Executable || got[1].Binary {
		t.Fatalf("files = %+v", got)
	}
	pc, err := ParseContext(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Activate("canvas", []string{"font.ttf"}); err == nil || !strings.Contains(err.Error(), "binary file") {
		t.Fatalf("activating a binary file into the prompt: %v", err)
	}
}

// hostd serves a context before its sources arrive: with some external
// skills fetched and others not, the fetched ones activate and reach the
// prompt, the pending ones answer "not fetched yet" and keep their markers,
// and the instructions still read back exactly.
func TestExternalSkill_PendingSkillsDelayOnlyThemselves(t *testing.T) {
	origin := Origin{Root: "platform", Namespace: "p", Object: "docx"}
	root := Root{Name: "platform", Skills: []Skill{
		{Name: "docx", Description: "Edits Word documents.", Source: ociSource("docx"), Origin: origin},
		{Name: "pdf", Description: "Reads PDFs.", Source: ociSource("pdf"), Origin: Origin{Root: "platform", Namespace: "p", Object: "pdf"}},
	}}
	res, err := Publish(Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        []Root{root},
		Instructions: []Instruction{{Body: "Be careful.", Origin: Origin{Root: "workspace"}}},
		Activate:     []Activation{{Skill: "docx", Files: []string{"reference.md"}}, {Skill: "pdf"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ParseContext(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	files := []File{{Path: "reference.md", Content: "REFERENCE\n"}}
	part, rejected := pc.WithAvailableExternal(map[string]ExternalSkill{"docx": {SkillMD: docxSkillMD(), Files: files}})
	if len(rejected) != 0 {
		t.Fatalf("rejected %v", rejected)
	}
	mustContain(t, "partial prompt", part.SystemPrompt, "DOCX-BODY", "REFERENCE", bodyMarker("pdf"))
	mustNotContain(t, "partial prompt", part.SystemPrompt, bodyMarker("docx"))
	if a, err := part.Activate("docx", nil); err != nil || a.Body != docxBody {
		t.Fatalf("fetched skill: %+v, %v", a, err)
	}
	if _, err := part.Activate("pdf", nil); err == nil || !strings.Contains(err.Error(), "not fetched yet") {
		t.Fatalf("pending skill: %v", err)
	}
	if got, err := part.InstructionsText(); err != nil || got != "Be careful." {
		t.Fatalf("instructions with a pending skill = %q, %v", got, err)
	}
	if _, err := part.WithExternal(nil); err == nil || !strings.Contains(err.Error(), "skill docx") {
		t.Fatalf("WithExternal still needs every source: %v", err)
	}

	// A SKILL.md that disagrees with its Skill leaves only that skill pending.
	bad, rejected := pc.WithAvailableExternal(map[string]ExternalSkill{
		"docx": {SkillMD: docxSkillMD(), Files: files},
		"pdf":  {SkillMD: []byte("---\nname: pdf\ndescription: Something else.\n---\nx")},
	})
	if err := rejected["pdf"]; err == nil || !strings.Contains(err.Error(), "skill pdf") || len(rejected) != 1 {
		t.Fatalf("rejected = %v, want only pdf", rejected)
	}
	if _, err := bad.Activate("docx", nil); err != nil {
		t.Fatalf("docx held up by pdf: %v", err)
	}
}
