package contentpolicy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/google/cel-go/checker"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// RefusedError is content a rule refuses. It is the tenant's input to fix
// (resources.ReasonedError): the Workspace keeps its last good content.
type RefusedError struct {
	// Kind is "skill" or "tool"; Name its name.
	Kind, Name string
	// Rule is the rule's id (namespace/extension/name).
	Rule string
	// Why is the rule's message, or why it could not allow.
	Why string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s %q is refused by content rule %s: %s", e.Kind, e.Name, e.Rule, e.Why)
}

// Reason is the Workspace condition's reason.
func (e *RefusedError) Reason() vocab.ConditionReason { return vocab.ReasonContentRefused }

// Skill checks one published skill against the skill rules.
func (r *Rules) Skill(s *contract.SkillDoc) error {
	if r == nil || len(r.skill) == 0 {
		return nil
	}
	vars, size := skillVars(s)
	for _, c := range r.skill {
		if ok, why := c.evaluate(vars, size); !ok {
			return &RefusedError{Kind: "skill", Name: s.Name, Rule: c.ID(), Why: why}
		}
	}
	return nil
}

// Tool checks one tool against the tool rules; built-in tools are the
// agent's own and pass.
func (r *Rules) Tool(t *contract.Tool) error {
	if r == nil || len(r.tool) == 0 || t.Builtin {
		return nil
	}
	vars, size := toolVars(t)
	for _, c := range r.tool {
		if ok, why := c.evaluate(vars, size); !ok {
			return &RefusedError{Kind: "tool", Name: t.Name, Rule: c.ID(), Why: why}
		}
	}
	return nil
}

// Context checks the content of a context's data (a rendered one, or a
// last good one about to be held): every skill of skills.json and every
// tool of the manifest's registry for which tools says true (nil: every
// tool). The first refusal is returned.
func (r *Rules) Context(data map[string]string, tools func(*contract.Tool) bool) error {
	if r.Empty() {
		return nil
	}
	if len(r.skill) > 0 && data[contract.KeySkills] != "" {
		var skills contract.Skills
		if err := json.Unmarshal([]byte(data[contract.KeySkills]), &skills); err != nil {
			return fmt.Errorf("reading %s for the content rules: %w", contract.KeySkills, err)
		}
		for i := range skills.Skills {
			if err := r.Skill(&skills.Skills[i]); err != nil {
				return err
			}
		}
	}
	if len(r.tool) > 0 && data[contract.KeyManifest] != "" {
		var m contract.Manifest
		if err := json.Unmarshal([]byte(data[contract.KeyManifest]), &m); err != nil {
			return fmt.Errorf("reading %s for the content rules: %w", contract.KeyManifest, err)
		}
		for i := range m.Registry.Tools {
			if t := &m.Registry.Tools[i]; tools == nil || tools(t) {
				if err := r.Tool(t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// skillVars is the variable skill and the sizes of its values.
func skillVars(s *contract.SkillDoc) (map[string]any, sizes) {
	sz := sizes{by: map[string]uint64{}}
	front := map[string]any{"name": s.Name, "description": s.Description}
	if s.License != "" {
		front["license"] = s.License
	}
	if s.Compatibility != "" {
		front["compatibility"] = s.Compatibility
	}
	if len(s.Metadata) > 0 {
		md := make(map[string]any, len(s.Metadata))
		for k, v := range s.Metadata {
			md[k] = sz.str("skill.frontmatter.metadata.*", v)
			sz.str("skill.frontmatter.metadata.*", k)
		}
		front["metadata"] = md
		sz.n("skill.frontmatter.metadata", len(md))
	}
	if len(s.AllowedTools) > 0 {
		front["allowed-tools"] = s.AllowedTools
		sz.n("skill.frontmatter.allowed-tools", len(s.AllowedTools))
		for _, t := range s.AllowedTools {
			sz.str("skill.frontmatter.allowed-tools.*", t)
		}
	}
	for k, v := range front {
		if str, ok := v.(string); ok {
			sz.str("skill.frontmatter."+k, str)
			sz.str("skill.frontmatter.*", str)
			sz.str("skill.frontmatter.*", k)
		}
	}
	sz.n("skill.frontmatter", len(front))
	texts := []string{s.Description, s.Body}
	files := make([]any, 0, len(s.Files))
	for _, f := range s.Files {
		text := ""
		if f.Encoding == "" {
			text = f.Content
			texts = append(texts, text)
		}
		files = append(files, map[string]any{"path": sz.str("skill.files.*.path", f.Path),
			"text": sz.str("skill.files.*.text", text), "binary": f.Encoding != ""})
	}
	sz.n("skill.files", len(files))
	links := linksIn(&sz, "skill.links", texts...)
	// text is everything of the skill a model may read, in one string: a
	// rule over it costs one pass, where one over each file costs the
	// number of files times the largest.
	text := strings.Join(append([]string{s.Name}, texts...), "\n")
	return map[string]any{"skill": map[string]any{
		"name": sz.str("skill.name", s.Name), "description": sz.str("skill.description", s.Description), "frontmatter": front,
		"body": sz.str("skill.body", s.Body), "files": files, "links": links, "text": sz.str("skill.text", text),
		"invisible": invisibleIn(&sz, "skill.invisible", text),
	}}, sz
}

// toolVars is the variable tool and the sizes of its values.
func toolVars(t *contract.Tool) (map[string]any, sizes) {
	sz := sizes{by: map[string]uint64{}}
	links := linksIn(&sz, "tool.links", t.Description)
	server := ""
	if t.MCP != nil {
		server = t.MCP.Tool
	}
	return map[string]any{"tool": map[string]any{
		"name": sz.str("tool.name", t.Name), "description": sz.str("tool.description", t.Description),
		"extension": sz.str("tool.extension", t.Extension), "discovered": t.MCP != nil,
		"server": sz.str("tool.server", server), "links": links,
		"invisible": invisibleIn(&sz, "tool.invisible", t.Name+"\n"+t.Description),
	}}, sz
}

// sizes are the sizes (string bytes, list or map entries) of the values a
// rule reads, by path (skill.files.*.text: every file's text), for the
// cost estimate; a value of the input at another path is sized at the
// largest of them.
type sizes struct {
	by  map[string]uint64
	max uint64
}

func (s *sizes) n(path string, n int) {
	s.by[path] = max(s.by[path], uint64(n))
	s.max = max(s.max, uint64(n))
}

func (s *sizes) str(path, v string) string {
	s.n(path, len(v))
	return v
}

// EstimateSize implements checker.CostEstimator. A comprehension's
// variable has its range's path and @items, @keys or @values (@keys when
// the range is dyn, as every value here is): all read as "*".
func (s sizes) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	path := node.Path()
	if len(path) == 0 || (path[0] != "skill" && path[0] != "tool") {
		// Not a value of the input (a literal, a comprehension's or a
		// binding's variable): cel-go sizes it from what it was built of.
		return nil
	}
	norm := make([]string, len(path))
	for i, p := range path {
		if strings.HasPrefix(p, "@") {
			p = "*"
		}
		norm[i] = p
	}
	if n, ok := s.by[strings.Join(norm, ".")]; ok {
		return &checker.SizeEstimate{Max: n}
	}
	return &checker.SizeEstimate{Max: s.max}
}

// EstimateCallCost implements checker.CostEstimator: cel-go's own costs.
func (sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// linksIn lists the URLs in texts as {url, scheme, host}: a scheme
// (a letter, then letters, digits, "+", "-" or "."), "://", then anything
// up to a space, a bracket, a quote or a backtick, less trailing
// punctuation; Markdown links and bare text alike. host is lowercased,
// without port or user info, "" when the URL does not parse (a rule that
// lists allowed hosts refuses it). It scans for "://" rather than running
// a regular expression from every position: linear, and fast on large
// skills.
func linksIn(sz *sizes, path string, texts ...string) []any {
	var out []any
	for _, text := range texts {
		for i := 0; ; {
			j := strings.Index(text[i:], "://")
			if j < 0 {
				break
			}
			at := i + j
			start := at
			for start > i && isSchemeByte(text[start-1]) {
				start--
			}
			for start < at && !isLetter(text[start]) { // a scheme starts with a letter
				start++
			}
			end := at + 3
			for end < len(text) && !strings.ContainsRune(" \t\r\n<>\"'()[]{}`", rune(text[end])) {
				end++
			}
			i = end
			if start == at {
				continue
			}
			raw := strings.TrimRight(text[start:end], ".,;:!?")
			scheme, host := "", ""
			if u, err := url.Parse(raw); err == nil {
				scheme, host = strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
			}
			out = append(out, map[string]any{"url": sz.str(path+".*.url", raw), "scheme": sz.str(path+".*.scheme", scheme), "host": sz.str(path+".*.host", host)})
		}
	}
	sz.n(path, len(out))
	return out
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

func isSchemeByte(b byte) bool {
	return isLetter(b) || b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'
}

// invisibleIn lists the invisible format characters of texts (Unicode
// category Cf: zero-width spaces and joiners, bidirectional controls, the
// soft hyphen, the byte order mark, tag characters), each once, as
// "U+200B", in order of first appearance. One pass in Go: a rule reads
// the list instead of running a character class over every byte.
func invisibleIn(sz *sizes, path string, texts ...string) []any {
	var out []any
	seen := map[rune]bool{}
	for _, text := range texts {
		for _, r := range text {
			if r < 0xAD || seen[r] || !unicode.Is(unicode.Cf, r) {
				continue
			}
			seen[r] = true
			out = append(out, sz.str(path+".*", fmt.Sprintf("U+%04X", r)))
		}
	}
	sz.n(path, len(out))
	return out
}
