package materialize

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

func sampleInput() Input {
	return Input{
		Hash:         "sha256:test",
		SystemPrompt: "# Skills\n\n- review: Review code.\n",
		Instructions: []Instruction{
			{Body: "Use Go 1.26.", Source: contract.InstructionSource{Origin: "configmap/loadout-system/org/AGENTS.md",
				Provenance: contract.Provenance{Authority: contract.AuthorityPlatform, Namespace: "loadout-system", Kind: contract.ProvenanceConfigMap, Name: "org", Key: "AGENTS.md"}}},
			{Body: "Run make test before you land.", Source: contract.InstructionSource{Origin: "workspace/team-a/dev/spec.instructions[0]",
				Provenance: contract.Provenance{Authority: contract.AuthorityProject, Namespace: "team-a", Kind: contract.ProvenanceWorkspace, Name: "dev", Key: "spec.instructions[0]"}}},
		},
		Manifest: contract.Manifest{
			Instructions: []string{"configmap/loadout-system/org/AGENTS.md", "workspace/team-a/dev/spec.instructions[0]"},
			Catalog: []contract.CatalogEntry{
				{Kind: "skill", Name: "deploy", Origin: "platform/loadout-system/deploy", Provenance: contract.Provenance{Authority: contract.AuthorityPlatform, Namespace: "loadout-system", Kind: contract.ProvenanceObject, Name: "deploy", Root: "platform"}},
				{Kind: "skill", Name: "review", Origin: "project/team-a/review", Provenance: contract.Provenance{Authority: contract.AuthorityProject, Namespace: "team-a", Kind: contract.ProvenanceObject, Name: "review", Root: "project"}},
			},
		},
		Skills: []contract.SkillDoc{
			{
				Name: "review", Description: "Review code: when asked for a review.", Origin: "project/team-a/review",
				Body:    "# Review\n\nRead the diff.\n",
				Files:   []contract.FileDoc{{Path: "checklist.md", Content: "- [ ] tests\n"}, {Path: "refs/style.md", Content: "no globals"}},
				License: "Apache-2.0", Compatibility: "any POSIX shell",
				Metadata:     map[string]string{"owner": "team-a", "version": "1.0"},
				AllowedTools: []string{"bash", "read"},
			},
			{Name: "deploy", Description: "yes", Origin: "platform/loadout-system/deploy", Body: "Deploy with care."},
		},
		Templates: []contract.TemplateDoc{
			{Name: "review", Description: "Ask for a review of one file.", Body: "Review {{file}} for {{owner}}.", Variables: []string{"file", "owner"}},
			{Name: "hello", Body: "Say hello."},
		},
	}
}

func files(t *testing.T, tree *Tree) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range tree.Files() {
		m[f.Path] = string(f.Content)
	}
	return m
}

func TestBuild_WritesAgentSkillsAndPiPromptFormats(t *testing.T) {
	tree, err := Build(context.Background(), sampleInput(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := files(t, tree)
	want := map[string]string{
		// The platform's text only: Codex's global instructions.
		"AGENTS.md":        "# Organisation instructions\n\nUse Go 1.26.\n",
		"system-prompt.md": "# Skills\n\n- review: Review code.\n",
		// What Pi adds to its system prompt, read whole by the Pi package.
		"workspace-prompt.md": "# Organisation instructions\n\nUse Go 1.26.\n",
		// The tenant's text, labelled with its namespace: Pi's project section.
		"project-prompt.md": "# Project content\n\n" + projectPreamble + "\n\n" +
			"## Project content from namespace team-a (not organisation policy)\n\n" +
			"### Instructions (spec.instructions[0] of Workspace dev)\n\nRun make test before you land.\n",
		"skills/review/SKILL.md": "---\n" +
			"name: review\n" +
			"description: 'Review code: when asked for a review.'\n" +
			"license: Apache-2.0\n" +
			"compatibility: any POSIX shell\n" +
			"metadata:\n  owner: team-a\n  version: \"1.0\"\n" +
			"allowed-tools: bash read\n" +
			"---\n\n# Review\n\nRead the diff.\n",
		"skills/review/checklist.md":  "- [ ] tests\n",
		"skills/review/refs/style.md": "no globals",
		// "yes" stays a string for YAML 1.1 readers too.
		"skills/deploy/SKILL.md": "---\nname: deploy\ndescription: \"yes\"\n---\n\nDeploy with care.",
		"prompts/review.md":      "---\ndescription: Ask for a review of one file.\nargument-hint: <file> <owner>\n---\n\nReview {{file}} for {{owner}}.",
		"prompts/hello.md":       "---\n{}\n---\n\nSay hello.",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s:\n got %q\nwant %q", p, got[p], w)
		}
	}
	var m contract.Manifest
	if err := json.Unmarshal([]byte(got["manifest.json"]), &m); err != nil || !slices.Equal(m.Instructions, sampleInput().Manifest.Instructions) {
		t.Errorf("manifest.json = %q (%v), want the context's manifest", got["manifest.json"], err)
	}
	delete(got, "manifest.json")
	if len(got) != len(want) {
		t.Errorf("tree has %d files, want %d: %v", len(got), len(want), tree.Files())
	}
}

func TestBuild_AllowedToolsWithSpacesBecomeAList(t *testing.T) {
	in := Input{Skills: []contract.SkillDoc{{Name: "git", Description: "d", Body: "b", AllowedTools: []string{"Bash(git status)", "Read"}}}}
	tree, err := Build(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := files(t, tree)["skills/git/SKILL.md"]
	if !strings.Contains(md, "allowed-tools:\n  - Bash(git status)\n  - Read\n") {
		t.Errorf("SKILL.md = %q, want allowed-tools as a list", md)
	}
}

func TestBuild_SameInputSameBytesInAnyOrder(t *testing.T) {
	a, err := Build(context.Background(), sampleInput(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := sampleInput()
	slices.Reverse(in.Skills)
	slices.Reverse(in.Templates)
	slices.Reverse(in.Skills[1].Files)
	b, err := Build(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() {
		t.Errorf("digests differ: %s vs %s", a.Digest(), b.Digest())
	}
	if !slices.EqualFunc(a.Files(), b.Files(), func(x, y File) bool {
		return x.Path == y.Path && x.Mode == y.Mode && string(x.Content) == string(y.Content)
	}) {
		t.Error("files differ between two builds of the same context")
	}
}

func TestBuild_RefusesUnsafeNamesNamingThem(t *testing.T) {
	skill := func(name string, paths ...string) Input {
		s := contract.SkillDoc{Name: name, Description: "d", Body: "b"}
		for _, p := range paths {
			s.Files = append(s.Files, contract.FileDoc{Path: p, Content: "x"})
		}
		return Input{Skills: []contract.SkillDoc{s}}
	}
	for _, tc := range []struct {
		name  string
		in    Input
		names string
	}{
		{"skill name with ..", skill("../etc"), `skill "../etc"`},
		{"skill name with slash", skill("a/b"), `skill "a/b"`},
		{"hidden skill name", skill(".hidden"), `skill ".hidden"`},
		{"empty skill name", skill(""), `skill ""`},
		{"upper-case skill name", skill("Review"), `skill "Review"`},
		{"double hyphen", skill("a--b"), `skill "a--b"`},
		{"long skill name", skill(strings.Repeat("a", 65)), "skill \"aaaa"},
		{"file escaping with ..", skill("ok", "../../outside"), `file "../../outside"`},
		{"file with inner ..", skill("ok", "a/../../b"), `file "a/../../b"`},
		{"absolute file", skill("ok", "/etc/passwd"), `file "/etc/passwd"`},
		{"backslash file", skill("ok", `a\b`), `file "a\\b"`},
		{"NUL in file", skill("ok", "a\x00b"), `file "a\x00b"`},
		{"newline in file", skill("ok", "a\nb"), `file "a\nb"`},
		{"empty segment", skill("ok", "a//b"), `file "a//b"`},
		{"dot segment", skill("ok", "./a"), `file "./a"`},
		{"empty file path", skill("ok", ""), `file ""`},
		{"long segment", skill("ok", strings.Repeat("x", 256)), `file "xxxx`},
		{"file over SKILL.md", skill("ok", "SKILL.md"), `file "SKILL.md": collides`},
		{"file is also a dir", skill("ok", "a", "a/b"), `file "skills/ok/a/b"`},
		{"duplicate file", skill("ok", "a", "a"), `file "skills/ok/a": listed twice`},
		{"template name with ..", Input{Templates: []contract.TemplateDoc{{Name: "../x", Body: "b"}}}, `template "../x"`},
		{"duplicate skill", Input{Skills: []contract.SkillDoc{{Name: "a", Description: "d"}, {Name: "a", Description: "d"}}}, `skill "a": listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), tc.in, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("error = %v, want one naming %s", err, tc.names)
			}
		})
	}
}

func TestBuild_RefusesOversizeFilesAndTreesNamingThem(t *testing.T) {
	in := Input{Skills: []contract.SkillDoc{{Name: "big", Description: "d", Body: "b",
		Files: []contract.FileDoc{{Path: "blob.bin", Content: strings.Repeat("x", 2000)}}}}}
	_, err := Build(context.Background(), in, Options{Limits: Limits{MaxFileBytes: 1000}})
	if err == nil || !strings.Contains(err.Error(), `skill "big": file "skills/big/blob.bin": 2000 bytes, over the 1000-byte limit`) {
		t.Errorf("file limit: error = %v", err)
	}
	_, err = Build(context.Background(), in, Options{Limits: Limits{MaxTreeBytes: 1500}})
	if err == nil || !strings.Contains(err.Error(), `file "skills/big/blob.bin": the tree would hold more than its 1500-byte limit`) {
		t.Errorf("tree limit: error = %v", err)
	}
	_, err = Build(context.Background(), in, Options{Limits: Limits{MaxFiles: 3}})
	if err == nil || !strings.Contains(err.Error(), `3-file limit`) {
		t.Errorf("file count limit: error = %v", err)
	}
}

// fetched stands in for an external source (an OCI artifact): it supplies
// its own body and an executable script.
type fetched struct{ fail error }

func (f fetched) SkillContent(ctx context.Context, s contract.SkillDoc) (SkillContent, error) {
	if s.Name != "remote" {
		return InlineContent{}.SkillContent(ctx, s)
	}
	if f.fail != nil {
		return SkillContent{}, f.fail
	}
	return SkillContent{Body: "fetched body\n", Files: []File{{Path: "scripts/run.sh", Content: []byte("#!/bin/sh\n"), Mode: 0o700}}}, nil
}

func TestBuild_ContentSourceSuppliesBodyFilesAndModes(t *testing.T) {
	in := sampleInput()
	in.Skills = append(in.Skills, contract.SkillDoc{Name: "remote", Description: "from an artifact"})
	tree, err := Build(context.Background(), in, Options{Source: fetched{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tree.Files() {
		switch f.Path {
		case "skills/remote/SKILL.md":
			if !strings.HasSuffix(string(f.Content), "---\n\nfetched body\n") {
				t.Errorf("SKILL.md = %q", f.Content)
			}
		case "skills/remote/scripts/run.sh":
			if f.Mode != 0o755 {
				t.Errorf("script mode = %v, want 0755", f.Mode)
			}
		case "skills/review/checklist.md":
			if f.Mode != 0o644 {
				t.Errorf("inline file mode = %v, want 0644", f.Mode)
			}
		}
	}
	_, err = Build(context.Background(), in, Options{Source: fetched{fail: fs.ErrNotExist}})
	if err == nil || !strings.Contains(err.Error(), `skill "remote"`) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source failure: error = %v, want one naming skill remote", err)
	}
}
