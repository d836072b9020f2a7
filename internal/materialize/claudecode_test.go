package materialize

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// CLAUDE.md, Claude Code's managed memory, carries the platform's text
// only: its instructions and active skills, its extensions' prompt guides
// and the denied tools. The tenant's instructions, active skills and guides
// are in project-prompt.md, each under its namespace's heading.
func TestBuild_ClaudeCodeMemoryHoldsOnlyThePlatformsText(t *testing.T) {
	in := sampleInput()
	in.Manifest.ActiveSkills = []contract.ActiveSkill{{Name: "deploy"}, {Name: "review", Files: []string{"checklist.md"}}}
	platform := &contract.Provenance{Authority: contract.AuthorityPlatform, Namespace: "loadout-system", Kind: contract.ProvenanceExtension, Name: "platform-guard"}
	tenant := &contract.Provenance{Authority: contract.AuthorityProject, Namespace: "team-a", Kind: contract.ProvenanceExtension, Name: "review-extension"}
	in.Manifest.PromptGuides = []contract.PromptGuide{
		{Extension: "platform-guard", Text: "Never delete recursively.\n", Provenance: platform},
		{Extension: "review-extension", Text: "Use review_note for findings.\n", Provenance: tenant},
		{Extension: "unlabelled", Text: "No provenance, no authority."},
	}
	in.Manifest.Deny = []string{"web", "shell"}
	got := files(t, mustBuild(t, in, Options{ClaudeCode: true}))
	want := "# Organisation instructions\n\nUse Go 1.26.\n\n" +
		"# Active skill: deploy\n\nDeploy with care.\n\n" +
		"# Extension guides\n\n## Extension platform-guard\n\nNever delete recursively.\n\n" +
		"# Denied tools\n\nThe organisation's policy denies these tools (names or tool classes); calls to them are refused: `web`, `shell`.\n"
	if got[ClaudeFile] != want {
		t.Errorf("CLAUDE.md =\n%s\nwant\n%s", got[ClaudeFile], want)
	}
	wantProject := "# Project content\n\n" + projectPreamble + "\n\n" +
		"## Project content from namespace team-a (not organisation policy)\n\n" +
		"### Instructions (spec.instructions[0] of Workspace dev)\n\nRun make test before you land.\n\n" +
		"### Active skill: review\n\n# Review\n\nRead the diff.\n\n" +
		"#### review: checklist.md\n\n- [ ] tests\n\n" +
		"### Extension review-extension\n\nUse review_note for findings.\n\n" +
		"## Project content from extension unlabelled (not organisation policy)\n\n" +
		"### Extension unlabelled\n\nNo provenance, no authority.\n"
	if got[ProjectPromptFile] != wantProject {
		t.Errorf("project-prompt.md =\n%s\nwant\n%s", got[ProjectPromptFile], wantProject)
	}
	if got[WorkspacePromptFile] != want || got[AgentsFile] != want {
		t.Errorf("workspace-prompt.md and AGENTS.md differ from CLAUDE.md:\n%s\n%s", got[WorkspacePromptFile], got[AgentsFile])
	}
	in.Manifest.ActiveSkills = []contract.ActiveSkill{{Name: "review", Files: []string{"missing.md"}}}
	if _, err := Build(context.Background(), in, Options{ClaudeCode: true}); err == nil || !strings.Contains(err.Error(), `skill "review" has no file "missing.md"`) {
		t.Errorf("an active skill's missing file: %v", err)
	}
}

// Templates become Claude Code commands: {{var}} becomes $ARGUMENTS[0],
// $ARGUMENTS[1], … in the argument-hint's order, or $ARGUMENTS for a
// template's only variable. A
// template named like a skill gets -template: the skill wins /review.
func TestBuild_ClaudeCodeCommandsUsePositionalArguments(t *testing.T) {
	in := sampleInput()
	in.Templates = append(in.Templates, contract.TemplateDoc{Name: "explain", Body: "Explain {{topic}}; again: {{topic}}. Keep {{ topic }}.", Variables: []string{"topic"}})
	got := files(t, mustBuild(t, in, Options{ClaudeCode: true}))
	for path, want := range map[string]string{
		"commands/review-template.md": "---\ndescription: Ask for a review of one file.\nargument-hint: <file> <owner>\n---\n\nReview $ARGUMENTS[0] for $ARGUMENTS[1].",
		"commands/explain.md":         "---\nargument-hint: <topic>\n---\n\nExplain $ARGUMENTS; again: $ARGUMENTS. Keep {{ topic }}.",
		"commands/hello.md":           "Say hello.",
	} {
		if got[path] != want {
			t.Errorf("%s =\n%q\nwant\n%q", path, got[path], want)
		}
	}
	if _, ok := got["commands/review.md"]; ok {
		t.Error("the template review is written as /review, which the skill review takes")
	}
	if plain := files(t, mustBuild(t, in, Options{})); plain["commands/review-template.md"] != "" || plain[ManagedSettingsFile] != "" {
		t.Error("the Claude Code files without the Claude Code layout")
	}
}

// A command with tool steps is not a Claude Code command: the command file
// is prompt text and would drop the steps (the docs' ship command threw its
// note away). A command of render steps only is their texts in step order,
// another template's included, as hostd plans it (R-TPL-6).
func TestBuild_ClaudeCodeCommandWithToolStepsIsNotPublished_RTPL6(t *testing.T) {
	in := sampleInput()
	in.Templates = append(in.Templates,
		contract.TemplateDoc{Name: "ship", Body: "Ship it: {{summary}}", Variables: []string{"note", "summary"},
			Steps: []contract.TemplateStep{{Tool: "review_note", Arguments: []byte(`{"text":"{{note}}"}`)}, {Render: true}}},
		contract.TemplateDoc{Name: "brief", Body: "Be brief about {{topic}}.", Variables: []string{"topic"},
			Steps: []contract.TemplateStep{{Render: true}, {Template: "hello"}}})
	got := files(t, mustBuild(t, in, Options{ClaudeCode: true}))
	if md, ok := got["commands/ship.md"]; ok {
		t.Fatalf("a command with tool steps became a Claude Code command without them:\n%s", md)
	}
	if want := "---\nargument-hint: <topic>\n---\n\nBe brief about $ARGUMENTS.\n\nSay hello."; got["commands/brief.md"] != want {
		t.Errorf("commands/brief.md =\n%q\nwant\n%q", got["commands/brief.md"], want)
	}
}

// The managed settings route every tool call and session event through
// hostd (SessionStart through the command hook, which Claude Code runs there),
// block what a guarding event guards when hostd does not answer, accept no
// other hooks, and load hostd's MCP tools up front.
func TestBuild_ClaudeCodeManagedSettings(t *testing.T) {
	got := files(t, mustBuild(t, sampleInput(), Options{ClaudeCode: true, HostdURL: "http://127.0.0.1:9191/"}))
	var settings struct {
		AllowManagedHooksOnly bool `json:"allowManagedHooksOnly"`
		Hooks                 map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type      string `json:"type"`
				Command   string `json:"command"`
				URL       string `json:"url"`
				Timeout   int    `json:"timeout"`
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
		ManagedMCPServers map[string]map[string]any `json:"managedMcpServers"`
	}
	if err := json.Unmarshal([]byte(got[ManagedSettingsFile]), &settings); err != nil {
		t.Fatal(err)
	}
	if !settings.AllowManagedHooksOnly {
		t.Error("allowManagedHooksOnly is not set")
	}
	for event, onFailure := range map[string]string{"PreToolUse": "block", "PostToolUse": "", "PostToolUseFailure": "",
		"UserPromptSubmit": "block", "PreCompact": "block", "SessionEnd": ""} {
		groups := settings.Hooks[event]
		toolEvent := strings.Contains(event, "ToolUse")
		if len(groups) != 1 || (groups[0].Matcher == "*") != toolEvent || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", event, groups)
		}
		h := groups[0].Hooks[0]
		if h.Type != "http" || h.URL != "http://127.0.0.1:9191/v1/hooks/claude-code" || h.OnFailure != onFailure || h.Timeout != 60 {
			t.Errorf("%s hook %+v", event, h)
		}
	}
	if start := settings.Hooks["SessionStart"]; len(start) != 1 || len(start[0].Hooks) != 1 || start[0].Hooks[0].Type != "command" ||
		start[0].Hooks[0].Command != "loadout hook claude-code --hostd-url http://127.0.0.1:9191" {
		t.Errorf("SessionStart: %+v", start)
	}
	server := map[string]any{"type": "http", "url": "http://127.0.0.1:9191/mcp", "alwaysLoad": true}
	if b, _ := json.Marshal(settings.ManagedMCPServers["loadout"]); string(b) != testenv.JSON(t, server) {
		t.Errorf("managedMcpServers.loadout = %s", b)
	}
	var mcp struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(got[ManagedMCPFile]), &mcp); err != nil || testenv.JSON(t, mcp.MCPServers["loadout"]) != testenv.JSON(t, server) {
		t.Errorf("managed-mcp.json = %s (%v)", got[ManagedMCPFile], err)
	}
}

// A bound pod's tree (ManagedEtc) marks every http hook URL headless: one
// managed file serves `claude -p` and interactive sessions alike, and a
// platform ask with approvers on the default route (Headless) must reach
// them; a tree for a user's own install keeps the plain URL.
func TestBuild_ManagedEtcHookURLIsHeadless(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		url  string
	}{
		{Options{ManagedEtc: true, HostdURL: "http://127.0.0.1:8181"}, "http://127.0.0.1:8181/v1/hooks/claude-code?headless=true"},
		{Options{ClaudeCode: true, HostdURL: "http://127.0.0.1:8181"}, "http://127.0.0.1:8181/v1/hooks/claude-code"},
	} {
		var settings struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Type string `json:"type"`
					URL  string `json:"url"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(files(t, mustBuild(t, sampleInput(), tc.opts))[ManagedSettingsFile]), &settings); err != nil {
			t.Fatal(err)
		}
		for event, groups := range settings.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					if h.Type == "http" && h.URL != tc.url {
						t.Errorf("ManagedEtc=%v: %s hook URL %q, want %q", tc.opts.ManagedEtc, event, h.URL, tc.url)
					}
				}
			}
		}
	}
}
