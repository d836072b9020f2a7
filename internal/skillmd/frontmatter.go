package skillmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// MaxFrontmatterBytes bounds the YAML header of SKILL.md and template files.
// Real frontmatter is a few hundred bytes; the bound keeps a crafted header
// from costing seconds and hundreds of megabytes to parse.
const MaxFrontmatterBytes = 64 << 10

// ErrNoFrontmatter: the document does not start with a "---" line closed by
// another "---" line.
var ErrNoFrontmatter = errors.New("no YAML frontmatter (the file must start with a '---' line and close it with another)")

// Frontmatter holds the fields of SKILL.md and template frontmatter that
// Loadout reads; unknown fields are ignored (rule R-SK-1), and listed in
// Unknown so that directory loaders can warn about them.
type Frontmatter struct {
	Name          Scalar            `json:"name"`
	Description   Scalar            `json:"description"`
	License       Scalar            `json:"license"`
	Compatibility Scalar            `json:"compatibility"`
	Metadata      map[string]Scalar `json:"metadata"`
	AllowedTools  ToolList          `json:"allowed-tools"`
	// Unknown lists the top-level keys that are none of the above, sorted.
	Unknown []string `json:"-"`
}

// knownFrontmatterFields are the keys frontmatter reads.
var knownFrontmatterFields = map[string]bool{
	"name": true, "description": true, "license": true, "compatibility": true, "metadata": true, "allowed-tools": true,
}

// Scalar accepts any YAML Scalar as text, because authors write
// `description: 42` or `name: yes` and YAML would otherwise turn those into a
// number or a boolean and fail the whole file.
type Scalar string

// UnmarshalJSON implements json.Unmarshaler.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch t := v.(type) {
	case nil:
		*s = ""
	case string:
		*s = Scalar(t)
	case bool:
		*s = Scalar(strconv.FormatBool(t))
	case float64:
		*s = Scalar(strconv.FormatFloat(t, 'f', -1, 64))
	default:
		return fmt.Errorf("expected a string, got %s", jsonKind(v))
	}
	return nil
}

// ToolList accepts allowed-tools both as the Agent Skills space-separated
// string and as a YAML list.
type ToolList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *ToolList) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch t := v.(type) {
	case nil:
		*l = nil
	case string:
		*l = strings.Fields(t)
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("allowed-tools entries must be strings, got %s", jsonKind(e))
			}
			out = append(out, s)
		}
		*l = out
	default:
		return fmt.Errorf("allowed-tools must be a string or a list, got %s", jsonKind(v))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Split separates a leading "---" … "---" block from the body.
// A UTF-8 byte order mark and CRLF line endings are tolerated. The body loses
// the blank lines around it, nothing else.
func Split(content string) (header, body string, err error) {
	content = strings.TrimPrefix(content, "\ufeff")
	first, rest, ok := strings.Cut(content, "\n")
	if !ok || strings.TrimRight(first, "\r") != "---" {
		return "", "", ErrNoFrontmatter
	}
	var b strings.Builder
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			return b.String(), strings.Trim(rest, "\r\n"), nil
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return "", "", ErrNoFrontmatter
}

// Parse parses a Markdown document with YAML frontmatter.
//
// The header is read with YAML 1.2 rules, as the Pi agent and the Agent
// Skills spec read it: `name: y` is the string "y" and `name: no` the string
// "no", where YAML 1.1 would turn both into booleans.
func Parse(content string) (Frontmatter, string, error) {
	header, body, err := Split(content)
	if err != nil {
		return Frontmatter{}, "", err
	}
	if len(header) > MaxFrontmatterBytes {
		return Frontmatter{}, "", fmt.Errorf("YAML frontmatter is %d bytes, over the limit of %d", len(header), MaxFrontmatterBytes)
	}
	if fm, ok := parsePlainHeader(header); ok {
		return fm, body, nil
	}
	fm, err := parseYAMLHeader(header)
	if err != nil {
		return Frontmatter{}, "", err
	}
	return fm, body, nil
}

// parseYAMLHeader reads a frontmatter header with the YAML parser.
func parseYAMLHeader(header string) (Frontmatter, error) {
	var doc any
	if err := yaml.Unmarshal([]byte(header), &doc); err != nil {
		return Frontmatter{}, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	var fm Frontmatter
	if doc == nil {
		return fm, nil
	}
	fields, ok := doc.(map[string]any)
	if !ok {
		return Frontmatter{}, fmt.Errorf("invalid YAML frontmatter: expected a mapping of string keys, got %s", jsonKind(doc))
	}
	// The typed fields decode through JSON so that Scalar and ToolList keep
	// one set of rules for every source of frontmatter.
	raw, err := json.Marshal(doc)
	if err != nil {
		return Frontmatter{}, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	if err := json.Unmarshal(raw, &fm); err != nil {
		return Frontmatter{}, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	for k := range fields {
		if !knownFrontmatterFields[k] {
			fm.Unknown = append(fm.Unknown, k)
		}
	}
	slices.Sort(fm.Unknown)
	return fm, nil
}

// parsePlainHeader reads the common header, one "key: text" line per field,
// without the YAML parser, which costs most of the time of loading a skill
// directory. It accepts only lines whose meaning under YAML 1.2 is not in
// doubt (ok is false otherwise, and the caller parses with YAML): a key among
// name, description, license and compatibility, each at most once, and a
// value of printable ASCII that starts with a letter, is no YAML keyword and
// holds nothing that YAML reads as syntax (':', '#', brackets, braces) or
// trims (trailing blanks). Such a value is a plain scalar YAML reads as this
// very string. TestParsePlainHeader_AgreesWithYAML holds it to that.
func parsePlainHeader(header string) (Frontmatter, bool) {
	var fm Frontmatter
	fields := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(header, "\n"), "\n") {
		key, value, ok := strings.Cut(line, ": ")
		field := fm.plainField(key)
		if !ok || field == nil || *field != "" || !plainText(value) {
			return Frontmatter{}, false // not plain, or a repeated key (a YAML error)
		}
		*field = Scalar(value)
		fields++
	}
	return fm, fields > 0
}

// plainField is the field parsePlainHeader fills for key, or nil.
func (fm *Frontmatter) plainField(key string) *Scalar {
	switch key {
	case "name":
		return &fm.Name
	case "description":
		return &fm.Description
	case "license":
		return &fm.License
	case "compatibility":
		return &fm.Compatibility
	}
	return nil
}

// yamlKeywords are plain words YAML 1.2 (or, for safety, YAML 1.1) reads as
// something other than a string; compared in lower case.
var yamlKeywords = map[string]bool{
	"true": true, "false": true, "null": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true,
}

// plainText reports whether value is a YAML plain scalar that reads as
// itself: see parsePlainHeader.
func plainText(value string) bool {
	if value == "" || !isASCIILetter(value[0]) || value[len(value)-1] == ' ' || yamlKeywords[strings.ToLower(value)] {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < 0x20 || c > 0x7e || strings.IndexByte(":#[]{}", c) >= 0 {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// MetadataMap converts the frontmatter metadata map, keeping nil for none.
func (fm Frontmatter) MetadataMap() map[string]string {
	if len(fm.Metadata) == 0 {
		return nil
	}
	out := make(map[string]string, len(fm.Metadata))
	for k, v := range fm.Metadata {
		out[k] = string(v)
	}
	return out
}

// SetDescription returns content, a Markdown document with YAML frontmatter,
// with the frontmatter's description replaced by description. The body and
// the other fields are kept; the frontmatter is re-encoded, so its layout and
// quoting may change. `loadout import --push --truncate-descriptions` uses it
// so that a pushed SKILL.md agrees with the Skill that pins it.
func SetDescription(content []byte, description string) ([]byte, error) {
	text := string(content)
	start := 0
	if strings.HasPrefix(text, "\ufeff") {
		start = len("\ufeff")
	}
	first, _, ok := strings.Cut(text[start:], "\n")
	if !ok || strings.TrimRight(first, "\r") != "---" {
		return nil, ErrNoFrontmatter
	}
	headerStart := start + len(first) + 1
	headerEnd := -1
	for i := headerStart; i < len(text); {
		line, _, _ := strings.Cut(text[i:], "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			headerEnd = i
			break
		}
		i += len(line) + 1
	}
	if headerEnd < 0 {
		return nil, ErrNoFrontmatter
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text[headerStart:headerEnd]), &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML frontmatter: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("invalid YAML frontmatter: expected a mapping")
	}
	m := doc.Content[0]
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: description}
	found := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "description" {
			m.Content[i+1], found = value, true
		}
	}
	if !found {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "description"}, value)
	}
	header, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return []byte(text[:headerStart] + string(header) + text[headerEnd:]), nil
}

// SkillDescription is the description in a skill file's frontmatter, or ""
// when it has none or cannot be parsed.
func SkillDescription(content []byte) string {
	fm, _, err := Parse(string(content))
	if err != nil {
		return ""
	}
	return string(fm.Description)
}
