package materialize

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// promptFrontmatter is a Pi prompt template's frontmatter.
type promptFrontmatter struct {
	Description  string `yaml:"description,omitempty"`
	ArgumentHint string `yaml:"argument-hint,omitempty"`
}

// skillMarkdown renders SKILL.md through the format's owner.
func skillMarkdown(s contract.SkillDoc, body string) ([]byte, error) {
	return skillmd.Render(skillmd.Fields{Name: s.Name, Description: s.Description, License: s.License,
		Compatibility: s.Compatibility, Metadata: s.Metadata, AllowedTools: s.AllowedTools}, body)
}

// promptMarkdown renders a Pi prompt template. The body keeps its {{var}}
// placeholders: the Pi package renders it through hostd, which fills them
// and reports a missing one; argument-hint names them in order, so
// "/review a b" reads as file=a owner=b.
func promptMarkdown(t contract.TemplateDoc) ([]byte, error) {
	fm := promptFrontmatter{Description: t.Description}
	hints := make([]string, 0, len(t.Variables))
	for _, v := range t.Variables {
		hints = append(hints, "<"+v+">")
	}
	fm.ArgumentHint = strings.Join(hints, " ")
	return skillmd.WithFrontmatter(fm, t.Body)
}

// agentsMarkdown is the instructions text ending in one newline, or nothing.
func agentsMarkdown(instructions string) string {
	if instructions = strings.TrimRight(instructions, "\n"); instructions == "" {
		return ""
	}
	return instructions + "\n"
}

// workspaceMemory is the memory file of the agents that get no system prompt
// from Loadout (Claude Code's CLAUDE.md, Codex's AGENTS.md): the Workspace's
// instructions, each active skill with its requested files, and the
// extensions' prompt guides, in the sections and order the Pi package adds
// them to Pi's system prompt. bodies holds each skill's body and files, by
// skill name.
func workspaceMemory(in Input, bodies map[string]SkillContent) (string, error) {
	var parts []string
	add := func(s string) {
		if s = strings.Trim(s, "\n"); s != "" {
			parts = append(parts, s)
		}
	}
	if instructions := strings.Trim(in.Instructions, "\n"); instructions != "" {
		add("# Workspace instructions\n\n" + instructions)
	}
	active := slices.Clone(in.Manifest.ActiveSkills)
	slices.SortFunc(active, func(a, b contract.ActiveSkill) int { return strings.Compare(a.Name, b.Name) })
	for _, a := range active {
		content, ok := bodies[a.Name]
		if !ok {
			return "", fmt.Errorf("manifest activeSkills: skill %q is not among the skills", a.Name)
		}
		add("# Active skill: " + a.Name + "\n\n" + skillBody(content))
		for _, f := range a.Files {
			i := slices.IndexFunc(content.Files, func(x File) bool { return x.Path == f })
			if i < 0 {
				return "", fmt.Errorf("manifest activeSkills: skill %q has no file %q", a.Name, f)
			}
			text, err := content.Files[i].Bytes() // a fetched skill's file is read from disk
			if err != nil {
				return "", fmt.Errorf("skill %q: %w", a.Name, err)
			}
			add("## " + a.Name + ": " + f + "\n\n" + string(text))
		}
	}
	var guides []string
	for _, g := range in.Manifest.PromptGuides {
		if text := strings.Trim(g.Text, "\n"); text != "" {
			guides = append(guides, "## Extension "+g.Extension+"\n\n"+text)
		}
	}
	if len(guides) > 0 {
		add("# Extension guides\n\n" + strings.Join(guides, "\n\n"))
	}
	if len(parts) == 0 {
		return "", nil
	}
	return strings.Join(parts, "\n\n") + "\n", nil
}

// skillBody is a skill's body without frontmatter: an external source's own
// SKILL.md loses its frontmatter (read by the format's owner, skillmd).
func skillBody(c SkillContent) string {
	if c.SkillMD == nil {
		return c.Body
	}
	if _, body, err := skillmd.Split(string(c.SkillMD)); err == nil {
		return body
	}
	return string(c.SkillMD)
}
