package resources

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// Limits of the Agent Skills format (rule R-SK-1), declared in api/v1alpha1.
const (
	maxNameLen          = v1alpha1.MaxLogicalNameLength
	maxDescriptionLen   = v1alpha1.MaxDescriptionLength
	maxCompatibilityLen = v1alpha1.MaxCompatibilityLength
)

// checkName reports why name breaks rule R-SK-1, or "" when it is valid:
// 1–64 of [a-z0-9-], no leading or trailing '-', no "--".
func checkName(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > maxNameLen:
		return fmt.Sprintf("must be at most %d characters", maxNameLen)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not start or end with '-'"
	case strings.Contains(name, "--"):
		return "must not contain '--'"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("must contain only [a-z0-9-], found %q", r)
		}
	}
	return ""
}

// checkDescription reports why a skill description breaks rule R-SK-1.
func checkDescription(d string) string {
	switch {
	case strings.TrimSpace(d) == "":
		return "must not be blank"
	case utf8.RuneCountInString(d) > maxDescriptionLen:
		return fmt.Sprintf("must be at most %d characters", maxDescriptionLen)
	}
	return ""
}

// validateSkill checks a skill before it enters the catalog. checkNames is
// false for lenient directory roots, whose names the gatherer already judged.
func validateSkill(s Skill, checkNames bool) error {
	invalid := func(field, msg string) error {
		return &InvalidResourceError{Kind: KindSkill, Origin: s.Origin, Field: field, Message: msg}
	}
	if s.Name == "" {
		return invalid("name", "must not be empty")
	}
	if checkNames {
		if msg := checkName(s.Name); msg != "" {
			return invalid("name", msg)
		}
	}
	if msg := checkDescription(s.Description); msg != "" {
		return invalid("description", msg)
	}
	if utf8.RuneCountInString(s.Compatibility) > maxCompatibilityLen {
		return invalid("compatibility", fmt.Sprintf("must be at most %d characters", maxCompatibilityLen))
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
		clean, err := cleanRequest(f.Path)
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

// validateTemplate checks a template before it enters the catalog.
func validateTemplate(t Template, checkNames bool) error {
	invalid := func(field, msg string) error {
		return &InvalidResourceError{Kind: KindTemplate, Origin: t.Origin, Field: field, Message: msg}
	}
	if t.Name == "" {
		return invalid("name", "must not be empty")
	}
	if checkNames {
		if msg := checkName(t.Name); msg != "" {
			return invalid("name", msg)
		}
	}
	if t.Body == "" {
		return invalid("body", "must not be empty")
	}
	return nil
}
