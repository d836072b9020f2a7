package resources

import (
	"errors"
	"path"
	"strings"
)

// SkillReader reads a skill whose content the catalog does not hold, such as
// a skill directory on disk (package skilldir). Activation asks it for the
// current SKILL.md and each requested file, so this package does no I/O.
type SkillReader interface {
	// Current returns the name SKILL.md gives now, its body, and where it
	// was read (for a stale-catalog error, rule R-ACT-2).
	Current() (name, body, where string, err error)
	// ReadFile returns a requested file's resolved source and content after
	// both containment checks (rule R-ACT-4). A refusal wraps ErrRefused
	// (see Refused); any other error is a failed read.
	ReadFile(request string) (source string, content []byte, err error)
}

// ErrRefused marks a requested file a SkillReader refuses to read: it leaves
// the skill, or is not a regular file.
var ErrRefused = errors.New("refused")

// Refused marks err as a refusal: errors.Is(Refused(err), ErrRefused) holds
// and the message stays err's.
func Refused(err error) error { return refusedError{err} }

type refusedError struct{ err error }

func (e refusedError) Error() string        { return e.err.Error() }
func (e refusedError) Unwrap() error        { return e.err }
func (e refusedError) Is(target error) bool { return target == ErrRefused }

// CleanRequest is the lexical half of rule R-ACT-4 for a requested skill file:
// it refuses empty, absolute and backslash paths and any path that, joined to
// the skill root and cleaned, leaves it. It returns the clean slash path.
func CleanRequest(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("path is empty")
	case strings.ContainsRune(p, 0):
		return "", errors.New("path contains a NUL byte")
	case strings.ContainsRune(p, '\\'):
		return "", errors.New("path must use '/' separators (no backslash)")
	case path.IsAbs(p):
		return "", errors.New("absolute paths are refused")
	}
	c := path.Clean(p)
	if c == "." {
		return "", errors.New("path does not name a file inside the skill")
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errors.New("path leaves the skill root")
	}
	return c, nil
}
