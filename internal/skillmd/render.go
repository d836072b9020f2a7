package skillmd

import (
	"bytes"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Fields are the frontmatter fields of a SKILL.md Loadout writes.
type Fields struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string
}

// header is SKILL.md's frontmatter in the Agent Skills specification's field
// names and order.
type header struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	License       string            `yaml:"license,omitempty"`
	Compatibility string            `yaml:"compatibility,omitempty"`
	Metadata      map[string]string `yaml:"metadata,omitempty"`
	// AllowedTools is the specification's space-delimited string, or a list
	// when an entry holds whitespace and a string would split it.
	AllowedTools any `yaml:"allowed-tools,omitempty"`
}

// Render writes SKILL.md: the frontmatter, a blank line, then the body as it
// is. Parse reads back the same fields and body.
func Render(f Fields, body string) ([]byte, error) {
	h := header{Name: f.Name, Description: f.Description, License: f.License, Compatibility: f.Compatibility, Metadata: f.Metadata}
	if len(f.AllowedTools) > 0 {
		h.AllowedTools = strings.Join(f.AllowedTools, " ")
		for _, t := range f.AllowedTools {
			if t == "" || strings.ContainsAny(t, " \t\n\r") {
				h.AllowedTools = f.AllowedTools
				break
			}
		}
	}
	return WithFrontmatter(h, body)
}

// WithFrontmatter writes a Markdown document: header as YAML between "---"
// lines, a blank line, then body. Pi prompt templates and agent commands use
// the same layout.
func WithFrontmatter(header any, body string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(header); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	buf.WriteString("---\n\n")
	buf.WriteString(body)
	return buf.Bytes(), nil
}
