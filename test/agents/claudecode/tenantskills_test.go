package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Where a tenant's skills could live outside the managed skills directory
// (/etc/claude-code/.claude/skills, whose skills Claude Code counts as the
// organisation's): a directory given with --add-dir, whose .claude/skills
// Claude Code 2.1.328 lists beside the managed ones, as the user's or the
// project's would be. The managed settings cannot name such a directory:
// permissions.additionalDirectories there widens the file tools' reach but
// loads no skills. So the location needs the agent's command line, which
// is the tenant's (docs/agents.md).
func TestClaudeCode_TenantSkillsOutsideTheManagedDirectoryNeedAddDir(t *testing.T) { // R-AG-5
	if !ManagedInstall() {
		t.Skip("no private /etc/claude-code here (unshare --mount refused): the managed file cannot be installed")
	}
	const listing = "TENANT-PROBE-LISTING"
	tenantDir := func(t *testing.T) string {
		t.Helper()
		dir := t.TempDir()
		skill := filepath.Join(dir, ".claude", "skills", "tenant-probe")
		if err := os.MkdirAll(skill, 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: tenant-probe\ndescription: " + listing + " of the tenant.\n---\nTENANT-PROBE-BODY\n"
		if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Run("add-dir", func(t *testing.T) {
		a := NewAgent(t, HTTPHook)
		if _, stderr, err := a.Session.Run(t, "hello", "--add-dir", tenantDir(t)); err != nil {
			t.Fatalf("claude -p: %v\n%s", err, stderr)
		}
		first := a.Model.FirstAgentRequest(t)
		if !strings.Contains(first.Raw, listing) {
			t.Error("a skill under --add-dir's .claude/skills is not listed to the model")
		}
		if !strings.Contains(first.Raw, "team-a's review method for parser and runtime changes.") {
			t.Error("the managed skills are no longer listed beside it")
		}
	})
	t.Run("managed-additionalDirectories", func(t *testing.T) {
		a := NewAgent(t, HTTPHook)
		dir := tenantDir(t)
		a.EditManagedSettings(t, func(s map[string]any) {
			s["permissions"] = map[string]any{"additionalDirectories": []string{dir}}
		})
		a.Run(t, "hello")
		if strings.Contains(a.Model.FirstAgentRequest(t).Raw, listing) {
			t.Error("managed permissions.additionalDirectories loads skills: the platform could name the tenant's directory itself")
		}
	})
}
