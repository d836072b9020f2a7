package skilldir

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// DirReader re-reads a directory skill for activation (resources.SkillReader):
// SKILL.md and each requested file, through the skill directory as an
// os.Root, so what the containment checks accepted cannot be swapped for an
// escaping symlink before the read.
type DirReader struct {
	// Dir is the skill's directory on disk.
	Dir string
}

// Current re-reads SKILL.md: the name it gives now (or the directory's name)
// and its body.
func (d DirReader) Current() (name, body, where string, err error) {
	root, err := os.OpenRoot(d.Dir)
	if err != nil {
		return "", "", "", err
	}
	defer func() { _ = root.Close() }()
	where, err = resolveInDir(d.Dir, skillmd.FileName)
	if err != nil {
		return "", "", "", err
	}
	raw, err := readRegular(root, skillmd.FileName)
	if err != nil {
		return "", "", where, err
	}
	fm, body, err := skillmd.Parse(string(raw))
	if err != nil {
		return "", "", where, err
	}
	return skillName(fm, d.Dir), body, where, nil
}

// ReadFile reads one requested file after both containment checks (rule
// R-ACT-4); a path that leaves the skill is a refusal.
func (d DirReader) ReadFile(request string) (string, []byte, error) {
	src, err := resolveInDir(d.Dir, request)
	if err != nil {
		return "", nil, resources.Refused(err)
	}
	clean, _ := resources.CleanRequest(request) // resolveInDir accepted it
	root, err := os.OpenRoot(d.Dir)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = root.Close() }()
	content, err := readRegular(root, filepath.FromSlash(clean))
	if errors.Is(err, errOutsideRoot) {
		return "", nil, resources.Refused(err)
	}
	return src, content, err
}

// DirOf is the directory of a skill loaded from one, or "".
func DirOf(s resources.Skill) string {
	if d, ok := s.Reader.(DirReader); ok {
		return d.Dir
	}
	return ""
}
