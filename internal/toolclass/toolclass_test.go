package toolclass

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestMatcher_ClassesAndNamesMatchCaseInsensitively: a list entry matches a
// call's tool by name in any case or by the class the tool belongs to, for
// every agent's spelling; exact agent names keep matching only themselves.
func TestMatcher_ClassesAndNamesMatchCaseInsensitively(t *testing.T) {
	for _, tc := range []struct {
		list      []string
		match     []string
		dontMatch []string
	}{
		{[]string{"shell"}, []string{"bash", "Bash", "BASH", "exec_command", "shell", "Shell", "PowerShell", "Monitor", "write_stdin"}, []string{"read", "Write", "apply_patch", "review_note"}},
		{[]string{"SHELL"}, []string{"bash", "Bash"}, []string{"Read"}},
		{[]string{"Bash"}, []string{"Bash", "bash", "BASH"}, []string{"PowerShell", "exec_command", "shell"}},
		{[]string{"bash"}, []string{"Bash"}, []string{"Monitor"}},
		{[]string{"write"}, []string{"write", "Write", "apply_patch"}, []string{"Edit", "edit", "MultiEdit", "bash"}},
		{[]string{"edit"}, []string{"edit", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"}, []string{"Write"}},
		{[]string{"read"}, []string{"read", "Read", "NotebookRead", "view_image"}, []string{"Grep", "write"}},
		{[]string{"search"}, []string{"grep", "Grep", "Glob", "find", "ls", "LS"}, []string{"Read", "bash"}},
		{[]string{"web"}, []string{"WebFetch", "websearch", "web_search"}, []string{"Bash"}},
		{[]string{"review_note"}, []string{"review_note", "Review_Note"}, []string{"review", "mcp__loadout__review_note"}},
		{[]string{"Review_Note"}, []string{"review_note"}, []string{"review"}},
		{[]string{"edit", "write"}, []string{"edit", "Edit", "MultiEdit", "Write", "apply_patch"}, []string{"Read", "bash"}},
		{[]string{"mcp__github__create_issue"}, []string{"mcp__GitHub__create_issue"}, []string{"create_issue"}},
		{nil, nil, []string{"bash", ""}},
	} {
		m := NewMatcher(tc.list)
		for _, n := range tc.match {
			if !m.Match(n) {
				t.Errorf("%v does not match %q", tc.list, n)
			}
		}
		for _, n := range tc.dontMatch {
			if m.Match(n) {
				t.Errorf("%v matches %q", tc.list, n)
			}
		}
		if m.Empty() != (len(tc.list) == 0) {
			t.Errorf("%v: Empty() = %v", tc.list, m.Empty())
		}
	}
}

func TestClasses_OfAgentNames(t *testing.T) {
	for tool, want := range map[string][]Class{
		"bash": {Shell}, "Bash": {Shell}, "apply_patch": {Write, Edit}, "MultiEdit": {Edit},
		"review_note": nil, "shell": {Shell}, "glob": {Search},
	} {
		if got := Classes(tool); !slices.Equal(got, want) {
			t.Errorf("Classes(%q) = %v, want %v", tool, got, want)
		}
	}
	for _, c := range []string{"shell", "Read", "WRITE", "edit", "search", "web"} {
		if !IsClass(c) {
			t.Errorf("IsClass(%q) = false", c)
		}
	}
	if IsClass("bash") {
		t.Error("IsClass(bash) = true: bash is a tool, not a class")
	}
}

// TestTable_DocsAgentsShowsTheSameTable: docs/agents.md carries this table,
// row for row, so the documented vocabulary is the enforced one.
func TestTable_DocsAgentsShowsTheSameTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := markdown(); !strings.Contains(string(doc), want) {
		t.Fatalf("docs/agents.md lacks the tool class table; it should contain:\n%s", want)
	}
}

// markdown renders Table as docs/agents.md shows it.
func markdown() string {
	names := func(ns []string) string {
		if len(ns) == 0 {
			return "—"
		}
		q := make([]string, len(ns))
		for i, n := range ns {
			q[i] = "`" + n + "`"
		}
		return strings.Join(q, ", ")
	}
	var b strings.Builder
	b.WriteString("| class | Pi | Claude Code | Codex | note |\n|---|---|---|---|---|\n")
	for _, r := range Table {
		b.WriteString("| `" + string(r.Class) + "` | " + names(r.Pi) + " | " + names(r.ClaudeCode) + " | " + names(r.Codex) + " | " + r.Note + " |\n")
	}
	return b.String()
}

func TestMatcher_AllMatchesEveryTool(t *testing.T) {
	m := NewMatcher([]string{All})
	for _, tool := range []string{"bash", "Bash", "read", "mcp__github__create_issue", "review-notes"} {
		if !m.Match(tool) {
			t.Errorf("[%s] does not match %q", All, tool)
		}
	}
	if NewMatcher([]string{"shell"}).Match("read") {
		t.Error("[shell] matches read")
	}
}
