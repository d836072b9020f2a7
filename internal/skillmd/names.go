package skillmd

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Limits of the Agent Skills format (rule R-SK-1), declared in api/v1alpha1.
const (
	MaxNameLen          = vocab.MaxLogicalNameLength
	MaxDescriptionLen   = vocab.MaxDescriptionLength
	MaxCompatibilityLen = vocab.MaxCompatibilityLength
)

// CheckName reports why name breaks rule R-SK-1, or "" when it is valid:
// 1–64 of [a-z0-9-], no leading or trailing '-', no "--".
func CheckName(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("must be at most %d characters", MaxNameLen)
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

// CheckDescription reports why a skill description breaks rule R-SK-1.
func CheckDescription(d string) string {
	switch {
	case strings.TrimSpace(d) == "":
		return "must not be blank"
	case utf8.RuneCountInString(d) > MaxDescriptionLen:
		return fmt.Sprintf("must be at most %d characters", MaxDescriptionLen)
	}
	return ""
}
