package resources

import (
	"fmt"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/skillmd"
)

// validateSkill checks a skill before it enters the catalog. checkNames is
// false for lenient directory roots, whose names the gatherer already judged.
func validateSkill(s Skill, checkNames bool) error {
	invalid := func(field, msg string) error {
		return &InvalidResourceError{Kind: KindSkill, Origin: s.Origin, Field: field, Message: msg}
	}
	if msg := nameProblem(s.Name, checkNames); msg != "" {
		return invalid("name", msg)
	}
	if msg := skillmd.CheckDescription(s.Description); msg != "" {
		return invalid("description", msg)
	}
	if utf8.RuneCountInString(s.Compatibility) > skillmd.MaxCompatibilityLen {
		return invalid("compatibility", fmt.Sprintf("must be at most %d characters", skillmd.MaxCompatibilityLen))
	}
	if s.Source != nil {
		if field, msg := checkSource(s.Source); msg != "" {
			return invalid(field, msg)
		}
		if s.Body != "" || len(s.Files) > 0 {
			return invalid("source", "body and files must be unset when source is set: the source provides SKILL.md and every file")
		}
	}
	seen := make(map[string]bool, len(s.Files))
	for i, f := range s.Files {
		field := fmt.Sprintf("files[%d].path", i)
		clean, err := CleanRequest(f.Path)
		if err != nil {
			return invalid(field, err.Error())
		}
		if clean != f.Path {
			return invalid(field, fmt.Sprintf("must be written in clean form %q", clean))
		}
		if seen[clean] {
			return invalid(field, fmt.Sprintf("duplicate path %q", clean))
		}
		seen[clean] = true
	}
	return nil
}

// nameProblem says what is wrong with a skill's or a template's name, or "":
// it must be set and, when checkNames, follow the Agent Skills naming rules.
func nameProblem(name string, checkNames bool) string {
	if name == "" {
		return "must not be empty"
	}
	if checkNames {
		return skillmd.CheckName(name)
	}
	return ""
}

// validateTemplate checks a template before it enters the catalog.
func validateTemplate(t Template, checkNames bool) error {
	invalid := func(field, msg string) error {
		return &InvalidResourceError{Kind: KindTemplate, Origin: t.Origin, Field: field, Message: msg}
	}
	if msg := nameProblem(t.Name, checkNames); msg != "" {
		return invalid("name", msg)
	}
	if t.Body == "" {
		return invalid("body", "must not be empty")
	}
	if field, msg := validateSteps(t.Steps); msg != "" {
		return invalid(field, msg)
	}
	return nil
}
