package materialize

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Files of the Codex layout (Options.Codex), linked at the top of OUT like
// AGENTS.md. See docs/agents.md#codex.
const (
	// CodexHooksFile is Codex's hooks file: in CODEX_HOME it is the user's
	// hooks, which Codex runs once they are trusted.
	CodexHooksFile = "hooks.json"
	// CodexRequirementsFile is for /etc/codex/requirements.toml: the same
	// hooks as managed hooks, which Codex always runs and which user and
	// project configuration cannot remove or add to.
	CodexRequirementsFile = "requirements.toml"
	// CodexHookCommand is the hook both files run; `loadout` must be on the
	// PATH Codex runs hooks with.
	CodexHookCommand = "loadout hook codex"
	// codexHookTimeout (seconds) stays above `loadout hook codex --timeout`
	// (50 s): Codex runs a call whose hook it had to kill.
	codexHookTimeout = 60
	// codexSessionEndTimeout: Codex clamps a SessionEnd hook to 3 s (and
	// warns of a longer one on every run).
	codexSessionEndTimeout = 3
)

// codexTimeout is the timeout of the hook at event, in seconds.
func codexTimeout(event string) string {
	if event == "SessionEnd" {
		return strconv.Itoa(codexSessionEndTimeout)
	}
	return strconv.Itoa(codexHookTimeout)
}

// CodexHookEvents are the Codex events the hook runs at, in the order both
// files list them: session start, every prompt, each model request
// (PreModelRequest: BeforeModelRequest), every tool before and after the
// call (no matcher: every tool name), when Codex is about to stop, before
// it compacts the history (PreCompact: BeforeCompact) and when the session
// ends. See docs/agents.md#codex.
var CodexHookEvents = []string{"SessionStart", "UserPromptSubmit", "PreModelRequest", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd"}

// codexStatusMessage is what Codex shows while the PreToolUse hook runs.
const codexStatusMessage = "Loadout policy"

// codexHooksJSON is hooks.json: the hook at every CodexHookEvents event.
var codexHooksJSON = func() string {
	var b strings.Builder
	b.WriteString("{\n  \"hooks\": {\n")
	for i, event := range CodexHookEvents {
		extra := ""
		if event == "PreToolUse" {
			extra = `, "statusMessage": ` + strconv.Quote(codexStatusMessage)
		}
		b.WriteString("    " + strconv.Quote(event) + ": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": " +
			strconv.Quote(CodexHookCommand) + ", \"timeout\": " + codexTimeout(event) + extra + "}]}\n    ]")
		if i < len(CodexHookEvents)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}()

// codexRequirementsTOML makes the hooks managed: allow_managed_hooks_only
// drops every hook from user, project and plugin configuration, so nothing a
// user writes runs around a tool call or replaces Loadout's hook.
var codexRequirementsTOML = codexRequirements(CodexHookCommand, nil)

// codexRequirements is requirements.toml with command as the hook: `loadout
// hook codex` from the PATH in the Codex layout, the tree's own program with
// hostd's URL in the managed /etc layout (Options.ManagedEtc). A declared
// sandbox pins the sandbox modes (codexSandboxRequirements).
func codexRequirements(command string, sandbox *contract.Sandbox) string {
	hook := func(event, extra string) string {
		return "[[hooks." + event + "]]\n[[hooks." + event + ".hooks]]\ntype = \"command\"\ncommand = " +
			strconv.Quote(command) + "\ntimeout = " + codexTimeout(event) + "\n" + extra
	}
	var hooks string
	for i, event := range CodexHookEvents {
		extra := ""
		if event == "PreToolUse" {
			extra = "statusMessage = " + strconv.Quote(codexStatusMessage) + "\n"
		}
		if i > 0 {
			hooks += "\n"
		}
		hooks += hook(event, extra)
	}
	return `# Codex managed requirements from Loadout (docs/agents.md#codex).
# Install as /etc/codex/requirements.toml; user and project configuration
# cannot remove these hooks or add their own.
allow_managed_hooks_only = true
` + codexSandboxRequirements(sandbox) + `
` + hooks
}

// codexLayout adds the Codex files to the tree and returns its top-level
// links. OUT/skills is not one of them: Codex keeps its own system skills in
// CODEX_HOME/skills/.system, so skills is a real directory that both share,
// and each Workspace skill is a link in it (see linkSkills).
func codexLayout(b *builder, links []string, sandbox *contract.Sandbox) []string {
	b.add(CodexHooksFile, []byte(codexHooksJSON), 0o644)
	b.add(CodexRequirementsFile, []byte(codexRequirements(CodexHookCommand, sandbox)), 0o644)
	links = slices.DeleteFunc(slices.Clone(links), func(name string) bool { return name == SkillsDir })
	links = append(links, CodexHooksFile, CodexRequirementsFile)
	slices.Sort(links)
	return links
}

// skillNames are the skills of a tree's files, sorted.
func skillNames(files []File) []string {
	var names []string
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Path, SkillsDir+"/"); ok {
			if name, _, _ := strings.Cut(rest, "/"); !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// skillLinkTarget is where OUT/skills/<name> points in the Codex layout.
func skillLinkTarget(name string) string {
	return path.Join("..", DataLink, SkillsDir, name)
}

// ownSkillLink reports whether target is a link linkSkills made.
func ownSkillLink(target string) bool {
	return strings.HasPrefix(target, path.Join("..", DataLink, SkillsDir)+"/")
}

// linkSkills makes OUT/skills a directory holding one link per skill of t,
// through DataLink, so a skill's files change with the generation swap. It
// removes only its own links (those into DataLink) of skills the tree no
// longer has; anything else in OUT/skills (Codex's .system, the user's own
// skills, as directories or links) is left alone, and a skill whose name is
// taken by one is named in the error and not linked. A former top-level skills
// link of Write's is replaced by the directory.
func (w *writer) linkSkills(t *Tree) error {
	fi, err := w.root.Lstat(SkillsDir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		if err := w.root.Remove(SkillsDir); err != nil {
			return w.errorf("replacing the link %s by a directory: %w", SkillsDir, err)
		}
		err = fs.ErrNotExist
	case err == nil && !fi.IsDir():
		return w.errorf("%s exists and is not a directory; it is not deleted: move it away", SkillsDir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := w.root.Mkdir(SkillsDir, 0o755); err != nil {
			return w.errorf("%w", err)
		}
	} else if err != nil {
		return w.errorf("%w", err)
	}
	var errs []error
	for _, name := range t.skills {
		p := path.Join(SkillsDir, name)
		// A link into anywhere else is the user's own skill (skills/x ->
		// ~/my-skills/x): it is theirs like a directory, never replaced.
		if target, err := w.root.Readlink(p); err == nil && !ownSkillLink(target) {
			errs = append(errs, w.errorf("%s is a link to %s, not the link to %s that materialize makes; it is not replaced: move it away", p, target, skillLinkTarget(name)))
			continue
		}
		if err := w.linkOne(p, skillLinkTarget(name)); err != nil {
			errs = append(errs, err)
		}
	}
	dir, err := w.root.Open(SkillsDir)
	if err != nil {
		return errors.Join(append(errs, w.errorf("%w", err))...)
	}
	names, err := dir.Readdirnames(-1)
	_ = dir.Close()
	if err != nil {
		return errors.Join(append(errs, w.errorf("%w", err))...)
	}
	for _, name := range names {
		p := path.Join(SkillsDir, name)
		if target, err := w.root.Readlink(p); err == nil && ownSkillLink(target) && !slices.Contains(t.skills, name) {
			if err := w.root.Remove(p); err != nil {
				errs = append(errs, w.errorf("removing the link %s of a skill the context no longer has: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// skillLinksCurrent reports whether every skill of t has its link.
func (w *writer) skillLinksCurrent(t *Tree) bool {
	for _, name := range t.skills {
		if got, err := w.root.Readlink(path.Join(SkillsDir, name)); err != nil || got != skillLinkTarget(name) {
			return false
		}
	}
	return true
}
