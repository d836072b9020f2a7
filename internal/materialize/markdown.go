package materialize

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadout-dev/loadout/internal/contract"
)

// skillFrontmatter is SKILL.md's frontmatter in the Agent Skills
// specification's field names and order.
type skillFrontmatter struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	License       string            `yaml:"license,omitempty"`
	Compatibility string            `yaml:"compatibility,omitempty"`
	Metadata      map[string]string `yaml:"metadata,omitempty"`
	// AllowedTools is the specification's space-delimited string, or a list
	// when an entry holds whitespace and a string would split it.
	AllowedTools any `yaml:"allowed-tools,omitempty"`
}

// promptFrontmatter is a Pi prompt template's frontmatter.
type promptFrontmatter struct {
	Description  string `yaml:"description,omitempty"`
	ArgumentHint string `yaml:"argument-hint,omitempty"`
}

// skillMarkdown renders SKILL.md: frontmatter, a blank line, then the body as
// it is.
func skillMarkdown(s contract.SkillDoc, body string) ([]byte, error) {
	fm := skillFrontmatter{
		Name:          s.Name,
		Description:   s.Description,
		License:       s.License,
		Compatibility: s.Compatibility,
		Metadata:      s.Metadata,
	}
	if len(s.AllowedTools) > 0 {
		fm.AllowedTools = strings.Join(s.AllowedTools, " ")
		for _, t := range s.AllowedTools {
			if strings.ContainsFunc(t, isSpace) || t == "" {
				fm.AllowedTools = s.AllowedTools
				break
			}
		}
	}
	return withFrontmatter(fm, body)
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
	return withFrontmatter(fm, t.Body)
}

func withFrontmatter(fm any, body string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	buf.WriteString("---\n\n")
	buf.WriteString(body)
	return buf.Bytes(), nil
}

// agentsMarkdown is the instructions text ending in one newline, or nothing.
func agentsMarkdown(instructions string) string {
	if instructions = strings.TrimRight(instructions, "\n"); instructions == "" {
		return ""
	}
	return instructions + "\n"
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
