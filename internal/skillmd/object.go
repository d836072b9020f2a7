package skillmd

import (
	"encoding/json"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// FrontmatterObject is a document's YAML frontmatter as a JSON object, every
// field the author wrote and nothing else: what the MCP skills extension
// publishes as a skill's frontmatter, which a host compares field by field
// with the SKILL.md it reads. The header is read with YAML 1.2 rules, as
// Parse reads it.
func FrontmatterObject(content string) (json.RawMessage, error) {
	header, _, err := Split(content)
	if err != nil {
		return nil, err
	}
	if len(header) > MaxFrontmatterBytes {
		return nil, fmt.Errorf("YAML frontmatter is %d bytes, over the limit of %d", len(header), MaxFrontmatterBytes)
	}
	var doc any
	if err := yaml.Unmarshal([]byte(header), &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	if doc == nil {
		return json.RawMessage(`{}`), nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, fmt.Errorf("invalid YAML frontmatter: expected a mapping of string keys, got %s", jsonKind(doc))
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	return raw, nil
}
