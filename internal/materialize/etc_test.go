package materialize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The managed /etc layout: mounted whole at /etc/claude-code and /etc/codex,
// the tree gives each agent its managed files under the names it reads, and
// every hook names the tree's own program at that agent's mount path with
// hostd's URL (no loadout on the image's PATH, no LOADOUT_HOSTD_URL a tenant
// could point elsewhere).
func TestBuild_ManagedEtcLayout(t *testing.T) {
	tree := mustBuild(t, sampleInput(), Options{ManagedEtc: true, HostdURL: "http://127.0.0.1:8181"})
	got := files(t, tree)
	for _, name := range []string{ManagedSettingsFile, ManagedMCPFile, ClaudeFile, CodexRequirementsFile, CodexConfigFile, AgentsFile} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is missing", name)
		}
	}
	if _, ok := got[CodexHooksFile]; ok {
		t.Error("hooks.json is written: /etc/codex needs only the managed requirements")
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal([]byte(got[ManagedSettingsFile]), &settings); err != nil {
		t.Fatal(err)
	}
	if c := settings.Hooks["SessionStart"][0].Hooks[0].Command; c != "/etc/claude-code/bin/loadout hook claude-code --hostd-url http://127.0.0.1:8181" {
		t.Errorf("Claude Code's SessionStart hook runs %q", c)
	}
	req := got[CodexRequirementsFile]
	if n := strings.Count(req, `command = "/etc/codex/bin/loadout hook codex --hostd-url http://127.0.0.1:8181"`); n != len(CodexHookEvents) {
		t.Errorf("requirements.toml names the tree's hook program %d times, want once per event of %v:\n%s", n, CodexHookEvents, req)
	}
	if !strings.Contains(req, "allow_managed_hooks_only = true") {
		t.Errorf("requirements.toml does not make the hooks managed-only:\n%s", req)
	}
	// Codex reads no AGENTS.md from /etc/codex: the platform's text, and only
	// it, is the managed developer instructions.
	if want := "additional_developer_instructions = " + tomlString(got[ClaudeFile]) + "\n"; !strings.Contains(req, want) ||
		!strings.Contains(got[ClaudeFile], "Use Go 1.26.") || strings.Contains(req, "Run make test before you land.") {
		t.Errorf("requirements.toml does not carry the platform's text alone as additional_developer_instructions:\n%s", req)
	}
	if got := tomlString("a \"q\" \\ \n\t\x7f\x01 é"); got != `"a \"q\" \\ \n\t\u007f\u0001 é"` {
		t.Errorf("tomlString = %s", got)
	}
	if want := "[mcp_servers.loadout]\nurl = \"http://127.0.0.1:8181/mcp\"\n"; !strings.HasSuffix(got[CodexConfigFile], want) {
		t.Errorf("config.toml =\n%s\nwant hostd's MCP server", got[CodexConfigFile])
	}
	// The Codex layout (CODEX_HOME) is unchanged: loadout from the PATH.
	codexHome := files(t, mustBuild(t, sampleInput(), Options{Codex: true}))
	if codexHome[CodexRequirementsFile] != codexRequirementsTOML || strings.Contains(codexHome[CodexRequirementsFile], "/bin/loadout") {
		t.Errorf("the Codex layout's requirements.toml changed:\n%s", codexHome[CodexRequirementsFile])
	}
	if _, ok := codexHome[CodexConfigFile]; ok {
		t.Error("the Codex layout writes config.toml, the user's file in CODEX_HOME")
	}
}

// What an agent reads through the mount follows each update: every name at
// the tree's root is a link through ..data, so a path resolved after the swap
// reads the new generation, including Claude Code's .claude/skills.
func TestWrite_ManagedEtcFollowsUpdates(t *testing.T) {
	out := t.TempDir()
	in := sampleInput()
	if _, err := Write(out, mustBuild(t, in, Options{ManagedEtc: true})); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	skill := filepath.Join(ClaudeDotDir, SkillsDir, "review", SkillFile)
	if !strings.Contains(read(skill), "Read the diff.") {
		t.Errorf(".claude/skills/review/SKILL.md = %q", read(skill))
	}
	if !strings.Contains(read(filepath.Join(ClaudeDotDir, CommandsDir, "hello.md")), "Say hello.") {
		t.Error(".claude/commands/hello.md is not the template")
	}
	in.Skills[0].Body = "# Review\n\nRead the diff twice.\n"
	in.Instructions[0].Body = "Use Go 1.27."
	if _, err := Write(out, mustBuild(t, in, Options{ManagedEtc: true})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(skill), "Read the diff twice.") {
		t.Errorf("after the update .claude/skills/review/SKILL.md = %q", read(skill))
	}
	if !strings.Contains(read(ClaudeFile), "Use Go 1.27.") {
		t.Errorf("after the update CLAUDE.md = %q", read(ClaudeFile))
	}
	for _, name := range []string{ClaudeDotDir, CodexConfigFile, CodexRequirementsFile, ManagedSettingsFile} {
		if target, err := os.Readlink(filepath.Join(out, name)); err != nil || target != filepath.Join(DataLink, name) {
			t.Errorf("%s is not the link into %s: %q %v", name, DataLink, target, err)
		}
	}
}
