package materialize

import (
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
