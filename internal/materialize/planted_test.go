package materialize

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// managedFiles are the tree's files an agent treats as organisation policy
// or the platform's own text: Claude Code's managed memory, settings, MCP
// configuration and commands, Codex's global instructions, managed
// requirements and hooks, and what the Pi package adds to Pi's system
// prompt. (OUT/skills is the Workspace's skill library, read on demand.)
func managedFile(path string) bool {
	switch path {
	case ClaudeFile, ManagedSettingsFile, ManagedMCPFile, AgentsFile, CodexRequirementsFile, CodexHooksFile, WorkspacePromptFile:
		return true
	}
	return strings.HasPrefix(path, CommandsDir+"/")
}

// The planted fixture (docs/agents.md): a tenant's instruction, skill body, skill
// file and prompt guide that claim the administrator's authority appear,
// byte for byte, in no managed file of any layout, and all of them reach
// project-prompt.md (and the memory hostd gives Claude Code and Codex)
// under the heading naming their namespace; the platform's text is in the
// managed files.
func TestBuild_PlantedTenantTextIsNeverManagedAndAlwaysLabelled(t *testing.T) {
	pc := renderParsed(t, resourcestest.PlantedInput())
	in, err := InputFrom(pc)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {ClaudeCode: true}, {Codex: true}, {ClaudeCode: true, Codex: true}} {
		got := files(t, mustBuild(t, in, opts))
		managed := 0
		for path, content := range got {
			if !managedFile(path) {
				continue
			}
			managed++
			for _, planted := range resourcestest.Planted() {
				if strings.Contains(content, planted) {
					t.Errorf("%+v: managed file %s holds the tenant's %q", opts, path, planted)
				}
			}
		}
		if managed < 2 {
			t.Fatalf("%+v: only %d managed files", opts, managed)
		}
		resourcestest.MustContain(t, "platform memory", got[WorkspacePromptFile],
			resourcestest.PlatformRule, resourcestest.PlatformGuide, resourcestest.PlatformSkillBody, "`web`")
		if opts.ClaudeCode && got[ClaudeFile] != got[WorkspacePromptFile] {
			t.Errorf("CLAUDE.md differs from workspace-prompt.md")
		}
		project := got[ProjectPromptFile]
		_, labelled, ok := strings.Cut(project, resourcestest.PlantedHeading+"\n\n")
		if !ok {
			t.Fatalf("project-prompt.md has no %q:\n%s", resourcestest.PlantedHeading, project)
		}
		resourcestest.MustContain(t, "team-a's project content", labelled, resourcestest.Planted()...)
		resourcestest.MustNotContain(t, "project-prompt.md", project, resourcestest.PlatformRule, resourcestest.PlatformGuide, resourcestest.PlatformSkillBody)
	}
	m, err := MemoryOf(pc)
	if err != nil {
		t.Fatal(err)
	}
	tree := files(t, mustBuild(t, in, Options{}))
	if m.Project != tree[ProjectPromptFile] || m.Platform != tree[WorkspacePromptFile] {
		t.Errorf("hostd's memory differs from the tree's:\n%s\n---\n%s", m.Project, tree[ProjectPromptFile])
	}
}

// Until an active external skill's source arrives, hostd's memory still
// holds every other part, and the skill's section says its content is not
// there yet.
func TestMemoryOf_PendingExternalSkillLeavesTheRest(t *testing.T) {
	in := resourcestest.PlantedInput()
	in.Roots[0].Skills[0].Body, in.Roots[0].Skills[0].Files = "", nil
	in.Roots[0].Skills[0].Source = &contract.SkillSource{OCI: &contract.OCISource{Reference: "ghcr.io/acme/review@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}
	in.Activate[0].Files = nil
	pc := renderParsed(t, in)
	m, err := MemoryOf(pc)
	if err != nil {
		t.Fatal(err)
	}
	_, labelled, ok := strings.Cut(m.Project, resourcestest.PlantedHeading)
	if !ok {
		t.Fatalf("no heading:\n%s", m.Project)
	}
	resourcestest.MustContain(t, "project content", labelled, resourcestest.PlantedInstruction, "### Active skill: review\n\n(Loadout cannot give this skill's content yet:", resourcestest.PlantedGuide)
	resourcestest.MustContain(t, "platform memory", m.Platform, resourcestest.PlatformRule, resourcestest.PlatformSkillBody)
}

// renderParsed renders in as the manager publishes it and parses the data
// back as hostd reads it.
func renderParsed(t *testing.T, in resources.Input) *published.Context {
	t.Helper()
	r, err := resources.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := published.Parse(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}
