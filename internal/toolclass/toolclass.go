package toolclass

import (
	"slices"
	"strings"
)

// Class is a canonical tool class: what a tool does, whatever an agent calls
// it. A policy that names a class (match.tools: [shell], deniedTools: [write])
// applies to every agent's tool of that class.
type Class string

// The classes. A tool may belong to more than one: Codex's apply_patch
// creates files (write) and changes them (edit).
const (
	// Shell runs a command line in a shell.
	Shell Class = "shell"
	// Read reads a file.
	Read Class = "read"
	// Write creates a file or replaces its whole content.
	Write Class = "write"
	// Edit changes part of an existing file.
	Edit Class = "edit"
	// Search finds files or text in files (grep, glob, ls).
	Search Class = "search"
	// Web fetches or searches the web.
	Web Class = "web"
)

// Row is one class and the names each agent's tools of that class carry, as
// the agent reports them to hooks (the names hostd sees).
type Row struct {
	Class      Class
	Pi         []string
	ClaudeCode []string
	Codex      []string
	// Note explains a row in docs/agents.md.
	Note string
}

// Table is the vocabulary: the one place that says which agent tool belongs
// to which class. docs/agents.md shows the same table (a test compares
// them), checked against the agents themselves:
//
//   - Pi 0.73.1 (integrations/pi's lockfile): its built-in tools' names in
//     @mariozechner/pi-coding-agent dist/core/tools.
//   - Claude Code 2.1.328: the tool names in the CLI, plus the legacy names
//     (MultiEdit, NotebookRead, LS) its permission rules and hooks still
//     accept. PowerShell and Monitor run shell commands too.
//   - Codex 0.169.0: its hooks report every shell tool (shell, shell_command,
//     exec_command, local_shell) as Bash with {"command": "…"}, and file
//     changes as apply_patch (codex-rs/core/src/tools/hook_names.rs); the
//     model-facing names are listed as well, so a deny list holds whichever
//     name reaches hostd.
//
// MCP tools have no class: policy names them by name, hostd's own tools by
// their registry name (Claude Code's mcp__loadout__review_note is
// review_note), other servers' tools as the agent reports them
// (mcp__github__create_issue).
var Table = []Row{
	{Class: Shell, Pi: []string{"bash"}, ClaudeCode: []string{"Bash", "PowerShell", "Monitor"},
		Codex: []string{"Bash", "shell", "shell_command", "exec_command", "local_shell", "write_stdin"},
		Note:  "Codex's hooks report all its shell tools as `Bash`; `write_stdin` types into a running command"},
	{Class: Read, Pi: []string{"read"}, ClaudeCode: []string{"Read", "NotebookRead"}, Codex: []string{"view_image"}},
	{Class: Write, Pi: []string{"write"}, ClaudeCode: []string{"Write"}, Codex: []string{"apply_patch"},
		Note: "`apply_patch` adds, changes and deletes files: it is in both write and edit"},
	{Class: Edit, Pi: []string{"edit"}, ClaudeCode: []string{"Edit", "MultiEdit", "NotebookEdit"}, Codex: []string{"apply_patch"}},
	{Class: Search, Pi: []string{"grep", "find", "ls"}, ClaudeCode: []string{"Grep", "Glob", "LS"}},
	{Class: Web, ClaudeCode: []string{"WebFetch", "WebSearch"}, Codex: []string{"web_search"}},
}

// members maps a folded class name to the folded names of its tools.
var members = func() map[string][]string {
	m := map[string][]string{}
	for _, r := range Table {
		c := Fold(string(r.Class))
		for _, names := range [][]string{r.Pi, r.ClaudeCode, r.Codex} {
			for _, n := range names {
				if f := Fold(n); !slices.Contains(m[c], f) {
					m[c] = append(m[c], f)
				}
			}
		}
	}
	return m
}()

// Classes returns the classes tool belongs to, compared case-insensitively;
// none for a tool the table does not know.
func Classes(tool string) []Class {
	f := Fold(tool)
	var out []Class
	for _, r := range Table {
		if slices.Contains(members[Fold(string(r.Class))], f) {
			out = append(out, r.Class)
		}
	}
	return out
}

// IsClass reports whether name (any case) is a class.
func IsClass(name string) bool {
	_, ok := members[Fold(name)]
	return ok
}

// Fold is how every policy compares tool names: case-insensitively (Unicode
// lower case), because agents disagree on case for the same tool (Pi's bash,
// Claude Code's Bash) and a policy must not be dodged by spelling.
func Fold(name string) string { return strings.ToLower(name) }

// All is the entry that matches every tool. The API's tool names cannot
// spell it: only the manager writes it, into the deny list of a context that
// denies everything (a Workspace being deleted, a platform policy that cannot
// be built).
const All = "*"

// Matcher decides whether a tool call's name is one a list names. An entry
// matches a call when it is the call's tool name, ignoring case, or a class
// the tool belongs to: [shell] matches bash, Bash and exec_command; [Bash]
// matches Bash and bash only. A class name is also a name: [shell] matches a
// tool called shell. The list is resolved once, when the matcher is built,
// into the set of folded names it matches, so a call costs one lookup.
type Matcher struct {
	names map[string]struct{}
	all   bool
}

// NewMatcher resolves list (tool names and classes, any case).
func NewMatcher(list []string) Matcher {
	m := Matcher{names: make(map[string]struct{}, len(list))}
	for _, e := range list {
		if e == All {
			m.all = true
		}
		f := Fold(e)
		m.names[f] = struct{}{}
		for _, n := range members[f] {
			m.names[n] = struct{}{}
		}
	}
	return m
}

// Match reports whether the list names tool, directly or by its class.
func (m Matcher) Match(tool string) bool {
	if m.all {
		return true
	}
	_, ok := m.names[Fold(tool)]
	return ok
}

// Empty reports whether the list named nothing.
func (m Matcher) Empty() bool { return len(m.names) == 0 }
