package skilldir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadout-dev/loadout/internal/resources"
)

// Names of the seed layout of a directory root.
const (
	instructionsFileName = "AGENTS.md"
	skillsDirName        = "skills"
	templatesDirName     = "templates"
	skillFileName        = "SKILL.md"
)

// Options tunes how directory roots are read.
type Options struct {
	// Strict makes a skill or template name that breaks rule R-SK-1, or a skill
	// name that differs from its directory, an error instead of a warning
	// (R-SK-2). Kubernetes objects are always strict.
	Strict bool
	// TruncateDescriptions loads a skill whose description is over the 1,024
	// characters of rule R-SK-1 with the description cut to 1,024 characters
	// and a warning, as the Pi agent loads it (whole) with a warning. Without
	// it such a skill is skipped with a diagnostic: the Skill API cannot hold
	// the description.
	TruncateDescriptions bool
	// SkipFiles leaves the files of directory skills unread (Skill.Files is
	// empty, Skill.Reader is a DirReader): for callers that pack the directory
	// themselves, such as `loadout import --push`.
	SkipFiles bool
}

// dirLoader reads one directory root and collects its diagnostics.
type dirLoader struct {
	name string   // root name, for origins
	base string   // root directory, absolute
	root *os.Root // base, opened: every read goes through it (stays inside)
	// skillsDir is the skills directory being searched (skillsRel, relative
	// to the root), opened below root while it is: the paths of the skills
	// directly in it are opened from there, sparing the walk down from root.
	skillsDir *os.Root
	skillsRel string
	shown     string // root directory as the caller wrote it, for diagnostics
	opts      Options
	diags     []resources.Diagnostic
	// strictErr is the first rule broken in strict mode.
	strictErr error
}

// LoadRoot reads a directory root in the seed layout: AGENTS.md,
// skills/<dir>/SKILL.md with the other files of <dir>, templates/<name>.md.
// A missing source means no resources of that kind (R-CAT-5); any other I/O
// error is returned. Skills with a missing frontmatter, invalid YAML or a blank
// description are skipped with a diagnostic naming the file (R-SK-2). In
// strict mode a broken name also returns a *resources.InvalidResourceError; the Root
// then holds only what was valid, and callers that publish must discard it.
func LoadRoot(name, dir string, opts Options) (resources.Root, []resources.Diagnostic, error) {
	l, err := newDirLoader(name, dir, opts)
	if err != nil {
		return resources.Root{}, nil, err
	}
	defer l.close()
	root := resources.Root{Name: name, Lenient: !opts.Strict}
	if root.Instructions, err = l.instructions(); err != nil {
		return resources.Root{}, l.diags, err
	}
	if root.Skills, err = l.skills(skillsDirName); err != nil {
		return resources.Root{}, l.diags, err
	}
	if root.Templates, err = l.templates(); err != nil {
		return resources.Root{}, l.diags, err
	}
	return root, l.diags, l.strictErr
}

// LoadSkills reads a directory whose subdirectories are Agent Skills
// (<dir>/<skill>/SKILL.md), as `loadout import` does; a dir that itself holds
// a SKILL.md is one skill.
func LoadSkills(name, dir string, opts Options) ([]resources.Skill, []resources.Diagnostic, error) {
	l, err := newDirLoader(name, dir, opts)
	if err != nil {
		return nil, nil, err
	}
	defer l.close()
	var skills []resources.Skill
	if _, err := l.root.Stat(skillFileName); err == nil {
		s, ok, err := l.skill(".", nil)
		if ok {
			skills = append(skills, s)
		}
		if err != nil {
			return nil, l.diags, err
		}
	} else if skills, err = l.skills("."); err != nil {
		return nil, l.diags, err
	}
	return skills, l.diags, l.strictErr
}

func newDirLoader(name, dir string, opts Options) (*dirLoader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", dir, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("root %q: not a directory", dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("root %q: %w", dir, err)
	}
	return &dirLoader{name: name, base: abs, root: root, shown: dir, opts: opts}, nil
}

func (l *dirLoader) close() { _ = l.root.Close() }

// child is a loader for one part of the same root, with diagnostics of its
// own, so that parts can be read concurrently and merged with adopt.
func (l *dirLoader) child() *dirLoader {
	return &dirLoader{name: l.name, base: l.base, root: l.root, skillsDir: l.skillsDir, skillsRel: l.skillsRel, shown: l.shown, opts: l.opts}
}

// adopt appends a child's diagnostics and keeps the first strict error.
func (l *dirLoader) adopt(c *dirLoader) {
	l.diags = append(l.diags, c.diags...)
	if l.strictErr == nil {
		l.strictErr = c.strictErr
	}
}

// rel is a slash path relative to the root, used in origins.
func (l *dirLoader) origin(rel string) resources.Origin {
	return resources.Origin{Root: l.name, Path: filepath.ToSlash(filepath.Clean(rel))}
}

// file is the path diagnostics name: under the directory the caller gave.
func (l *dirLoader) file(rel string) string {
	return filepath.Join(l.shown, rel)
}

func (l *dirLoader) report(rel string, sev resources.Severity, format string, args ...any) {
	l.diags = append(l.diags, resources.Diagnostic{File: l.file(rel), Severity: sev, Message: fmt.Sprintf(format, args...)})
}

// nameProblem reports a name that breaks R-SK-1 (or a skill name that differs
// from its directory): a warning in lenient mode, an error in strict mode. It
// reports whether the resource still loads.
func (l *dirLoader) nameProblem(kind, rel, msg string) bool {
	if !l.opts.Strict {
		l.report(rel, resources.SeverityWarning, "%s (loaded anyway: lenient mode)", msg)
		return true
	}
	l.report(rel, resources.SeverityError, "%s", msg)
	if l.strictErr == nil {
		l.strictErr = &resources.InvalidResourceError{Kind: kind, Origin: l.origin(rel), Field: "name", Message: msg}
	}
	return false
}

// errReported is a file left out with a diagnostic already reported.
var errReported = errors.New("reported")

// readOptional reads a file of the root; a missing file is (nil, nil). A file
// that resolves outside the root, is too large or is not a regular file is
// reported as skipped and returned as errReported, which callers pass over.
func (l *dirLoader) readOptional(rel string) ([]byte, error) {
	b, err := readRegular(l.root, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case perFileProblem(err):
		l.report(rel, resources.SeveritySkipped, "left out: %v", err)
		return nil, errReported
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", l.file(rel), err)
	}
	return b, nil
}

// inSkillsDir returns the name of rel in the open skills directory when rel
// is directly in it.
func (l *dirLoader) inSkillsDir(rel string) (string, bool) {
	return filepath.Base(rel), l.skillsDir != nil && filepath.Dir(rel) == l.skillsRel
}

// openSkillRoot opens the directory rel as a root of its own: from the open
// skills directory when rel is directly in it, else (or when that fails: a
// link leaving the skills directory but not the root) from the root. Both are
// os.Root opens, so containment is checked all the same.
func (l *dirLoader) openSkillRoot(rel string) (*os.Root, error) {
	if name, ok := l.inSkillsDir(rel); ok {
		if r, err := l.skillsDir.OpenRoot(name); err == nil {
			return r, nil
		}
	}
	return l.root.OpenRoot(rel)
}

// readDir lists the directory rel in name order, from the open skills
// directory when rel is directly in it, else (or when that fails) from the
// root, whose error is returned.
func (l *dirLoader) readDir(rel string) ([]fs.DirEntry, error) {
	if name, ok := l.inSkillsDir(rel); ok {
		if entries, err := readDirSorted(l.skillsDir, name); err == nil {
			return entries, nil
		}
	}
	return readDirSorted(l.root, rel)
}

// readDirOptional lists a directory of the root; a missing one is empty, and
// so is one that resolves outside the root (reported as skipped).
func (l *dirLoader) readDirOptional(rel string) ([]fs.DirEntry, error) {
	entries, err := readDirSorted(l.root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if err = classifyRootErr(l.root, rel, err); errors.Is(err, errOutsideRoot) {
			l.report(rel, resources.SeveritySkipped, "left out: %v", err)
			return nil, nil
		}
		return nil, fmt.Errorf("read directory %s: %w", l.file(rel), err)
	}
	return entries, nil
}

func (l *dirLoader) instructions() ([]resources.Instruction, error) {
	b, err := l.readOptional(instructionsFileName)
	if errors.Is(err, errReported) {
		return nil, nil
	}
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return nil, err
	}
	return []resources.Instruction{{Body: string(b), Origin: l.origin(instructionsFileName)}}, nil
}

// hidden entries (".git", ".DS_Store") are never resources.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }
