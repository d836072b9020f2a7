package resources

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Section headings of system-prompt.md. They are part of the published
// contract (docs/context-contract.md): agents and tests may look for them.
const (
	headingSkills = "# Skills"
	headingActive = "# Active skill: "
	headingTools  = "# Tools"
)

// BuildContext produces the text of system-prompt.md, in this order:
// instruction bodies; the name and description of every catalog skill; the
// activated skills sorted by name, each body followed by its requested files;
// the tools section naming every registered tool, then each prompt guide
// (R-CTX-5). Parts are joined with "\n\n" and the text ends with one "\n".
// Inactive skills contribute their description only, never their body
// (R-CTX-2). Activating a skill twice, or activating anything but the
// catalog's winner, is refused with an *ActivationError (R-CTX-3). No
// trimming happens here: budgets are enforced once, in Render (R-CTX-4).
func BuildContext(instructions []Instruction, cat *Catalog, active []ActivatedSkill, reg contract.Registry) (string, error) {
	active, err := checkActive(cat, active)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, in := range instructions {
		parts = appendPart(parts, in.Body)
	}
	return joinParts(append(parts, derivedParts(cat.Entries, active, reg)...)), nil
}

// derivedParts are the parts of system-prompt.md after the instructions, all
// derived from the manifest and the active skills (sorted by name).
func derivedParts(catalog []contract.CatalogEntry, active []ActivatedSkill, reg contract.Registry) []string {
	parts := appendPart(nil, skillsSection(catalog))
	for _, a := range active {
		parts = appendPart(parts, headingActive+a.Name+"\n\n"+a.Body)
		for _, f := range a.Files {
			parts = appendPart(parts, "## "+a.Name+": "+f.Request+"\n\n"+f.Content)
		}
	}
	return appendPart(parts, toolsSection(reg))
}

// appendPart appends s without its surrounding newlines, unless that leaves
// nothing.
func appendPart(parts []string, s string) []string {
	if s = strings.Trim(s, "\n"); s != "" {
		parts = append(parts, s)
	}
	return parts
}

// joinParts joins parts with a blank line and ends the text with one "\n".
func joinParts(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// checkActive applies the refusals of R-CTX-3 and returns the activated skills
// sorted by name.
func checkActive(cat *Catalog, active []ActivatedSkill) ([]ActivatedSkill, error) {
	seen := map[string]bool{}
	for _, a := range active {
		if seen[a.Name] {
			return nil, &ActivationError{Skill: a.Name, Message: "activated twice"}
		}
		seen[a.Name] = true
		w, ok := cat.skills[a.Name]
		if !ok {
			return nil, &ActivationError{Skill: a.Name, Message: "not in the catalog"}
		}
		if a.Origin != w.Origin.String() {
			return nil, &ActivationError{Skill: a.Name, Message: fmt.Sprintf("activated from %s, but the catalog's winner is %s", a.Origin, w.Origin)}
		}
	}
	sorted := slices.Clone(active)
	slices.SortFunc(sorted, func(a, b ActivatedSkill) int { return cmp.Compare(a.Name, b.Name) })
	return sorted, nil
}

// skillsSection lists every catalog skill's name and description (R-CTX-2).
func skillsSection(catalog []contract.CatalogEntry) string {
	var b strings.Builder
	for _, e := range catalog {
		if e.Kind != KindSkill {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(headingSkills + "\n\nSkills hold instructions for specific tasks. Before a task a skill describes, read its SKILL.md: among your agent's skills, or over MCP as the resource skill://NAME/SKILL.md of the loadout server (its other files are skill://NAME/PATH).\n")
		}
		fmt.Fprintf(&b, "\n- %s: %s", e.Name, oneLine(e.Description))
	}
	return b.String()
}

// toolsSection names every registered tool and appends each prompt guide.
func toolsSection(reg contract.Registry) string {
	if len(reg.Tools) == 0 && len(reg.PromptGuides) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(headingTools + "\n")
	if len(reg.Tools) > 0 {
		b.WriteString("\nYou may call these tools:\n")
	}
	for _, t := range reg.Tools {
		fmt.Fprintf(&b, "\n- %s", t.Name)
		if t.Description != "" {
			b.WriteString(": " + oneLine(t.Description))
		}
		switch {
		case t.Builtin:
			b.WriteString(" (built-in)")
		case t.Extension != "":
			b.WriteString(" (extension " + t.Extension + ")")
		}
	}
	for _, g := range reg.PromptGuides {
		if text := strings.Trim(g.Text, "\n"); text != "" {
			fmt.Fprintf(&b, "\n\n## Extension %s\n\n%s", g.Extension, text)
		}
	}
	return b.String()
}

// oneLine keeps list items on one line whatever the description contains.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
