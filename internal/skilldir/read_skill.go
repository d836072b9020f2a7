package skilldir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// unknownFieldNotes explain why a frontmatter field Pi reads is ignored.
var unknownFieldNotes = map[string]string{
	"disable-model-invocation": " (Pi then leaves the skill out of the model's skill list; Loadout lists every skill)",
}

// skillHeader parses the skill file fileRel and checks its frontmatter (rules
// R-SK-1, R-SK-2): unknown fields are warned about, a description over 1,024
// characters is cut (TruncateDescriptions) or skips the skill. ok is false
// when the skill is skipped with a diagnostic; a file without frontmatter is
// reported with severity noFrontmatter.
func (l *dirLoader) skillHeader(fileRel string, raw []byte, noFrontmatter resources.Severity) (fm skillmd.Frontmatter, body string, ok bool) {
	fm, body, err := skillmd.Parse(string(raw))
	if errors.Is(err, skillmd.ErrNoFrontmatter) && noFrontmatter == resources.SeverityWarning {
		l.report(fileRel, resources.SeverityWarning, "not a skill: %v", err)
		return skillmd.Frontmatter{}, "", false
	}
	if err != nil {
		l.report(fileRel, resources.SeveritySkipped, "%v", err)
		return skillmd.Frontmatter{}, "", false
	}
	for _, k := range fm.Unknown {
		l.report(fileRel, resources.SeverityWarning, "unknown frontmatter field %q: ignored%s", k, unknownFieldNotes[k])
	}
	d := string(fm.Description)
	n := utf8.RuneCountInString(d)
	switch {
	case strings.TrimSpace(d) == "":
		l.report(fileRel, resources.SeveritySkipped, "description must not be blank")
		return skillmd.Frontmatter{}, "", false
	case n > skillmd.MaxDescriptionLen && !l.opts.TruncateDescriptions:
		l.report(fileRel, resources.SeveritySkipped, "description has %d characters, over the %d a Skill can hold (Pi loads it with a warning): shorten it, or cut it with --truncate-descriptions", n, skillmd.MaxDescriptionLen)
		return skillmd.Frontmatter{}, "", false
	case n > skillmd.MaxDescriptionLen:
		cut := TruncateDescription(d)
		if strings.TrimSpace(cut) == "" {
			l.report(fileRel, resources.SeveritySkipped, "description has %d characters, and its first %d are blank", n, skillmd.MaxDescriptionLen)
			return skillmd.Frontmatter{}, "", false
		}
		fm.Description = skillmd.Scalar(cut)
		l.report(fileRel, resources.SeverityWarning, "description has %d characters, over the %d a Skill can hold: truncated to %d (--truncate-descriptions)", n, skillmd.MaxDescriptionLen, skillmd.MaxDescriptionLen)
	}
	if n := utf8.RuneCountInString(string(fm.Compatibility)); n > skillmd.MaxCompatibilityLen {
		l.report(fileRel, resources.SeveritySkipped, "compatibility must be at most %d characters", skillmd.MaxCompatibilityLen)
		return skillmd.Frontmatter{}, "", false
	}
	return fm, body, true
}

// TruncateDescription cuts a description to the 1,024 characters (runes) a
// Skill holds (rule R-SK-1).
func TruncateDescription(d string) string {
	i, n := 0, 0
	for i < len(d) && n < skillmd.MaxDescriptionLen {
		_, size := utf8.DecodeRuneInString(d[i:])
		i += size
		n++
	}
	return d[:i]
}

// skill reads the skill directory rel (rule R-SK-2, R-SK-3), whose entries
// discovery listed (nil: list them here). ok is false when the skill is
// skipped with a diagnostic.
func (l *dirLoader) skill(rel string, entries []fs.DirEntry) (resources.Skill, bool, error) {
	// The skill directory as a root of its own: a file of the skill must stay
	// inside the skill (R-ACT-4), checked atomically on every read. Opened
	// once, it also spares every read below the walk from the root down to
	// the skill. If it cannot be opened, the reads take the long way and
	// report what is wrong.
	skillRoot, err := l.openSkillRoot(rel)
	if err != nil {
		skillRoot = nil
	} else {
		defer func() { _ = skillRoot.Close() }()
	}
	fileRel := filepath.Join(rel, skillFileName)
	raw, err := l.readSkillFile(skillRoot, fileRel)
	if errors.Is(err, errReported) {
		return resources.Skill{}, false, nil
	}
	if err != nil {
		return resources.Skill{}, false, err
	}
	if raw == nil {
		l.report(rel, resources.SeveritySkipped, "no %s: not a skill", skillFileName)
		return resources.Skill{}, false, nil
	}
	fm, body, ok := l.skillHeader(fileRel, raw, resources.SeveritySkipped)
	if !ok {
		return resources.Skill{}, false, nil
	}
	dir := filepath.Join(l.base, rel)
	name := skillName(fm, dir)
	if msg := skillNameProblem(fm, name, filepath.Base(dir)); msg != "" && !l.nameProblem(resources.KindSkill, fileRel, msg) {
		return resources.Skill{}, false, nil
	}
	var files []resources.File
	if !l.opts.SkipFiles {
		if files, err = l.skillFiles(skillRoot, rel, entries); err != nil {
			return resources.Skill{}, false, err
		}
	}
	return resources.Skill{
		Name:          name,
		Description:   string(fm.Description),
		Body:          body,
		Files:         files,
		Reader:        DirReader{Dir: dir},
		License:       string(fm.License),
		Compatibility: string(fm.Compatibility),
		Metadata:      fm.MetadataMap(),
		AllowedTools:  []string(fm.AllowedTools),
		Origin:        l.origin(fileRel),
	}, true, nil
}

// fileSkill reads a *.md file directly in the skills directory as a skill of
// one file, as Pi does. Its name is its frontmatter name, or else (Pi's
// fallback) the name of the directory holding it; a name breaking R-SK-1 is
// judged as in a skill directory, but the name need not match anything. It
// has no files: the directory holding it is the skills directory, whose other
// entries are other skills. It is held in memory (no Dir), so activation
// serves the body read here. A *.md file without frontmatter (a README) is
// not a skill, with a warning.
func (l *dirLoader) fileSkill(rel string) (resources.Skill, bool, error) {
	raw, err := l.readOptional(rel)
	if errors.Is(err, errReported) || (err == nil && raw == nil) {
		return resources.Skill{}, false, nil
	}
	if err != nil {
		return resources.Skill{}, false, err
	}
	fm, body, ok := l.skillHeader(rel, raw, resources.SeverityWarning)
	if !ok {
		return resources.Skill{}, false, nil
	}
	name := skillName(fm, filepath.Dir(filepath.Join(l.base, rel)))
	msg := ""
	switch {
	case fm.Name == "":
		msg = fmt.Sprintf("frontmatter has no name; using the name of the directory holding it, %q, as Pi does", name)
	case skillmd.CheckName(name) != "":
		msg = fmt.Sprintf("name %q %s", name, skillmd.CheckName(name))
	}
	if msg != "" && !l.nameProblem(resources.KindSkill, rel, msg) {
		return resources.Skill{}, false, nil
	}
	return resources.Skill{
		Name:          name,
		Description:   string(fm.Description),
		Body:          body,
		License:       string(fm.License),
		Compatibility: string(fm.Compatibility),
		Metadata:      fm.MetadataMap(),
		AllowedTools:  []string(fm.AllowedTools),
		Origin:        l.origin(rel),
	}, true, nil
}

// skillName is the logical name of a directory skill: its frontmatter name, or
// the directory name when the frontmatter has none. Discovery and activation
// share it, so that R-ACT-2 compares like with like.
func skillName(fm skillmd.Frontmatter, dir string) string {
	if fm.Name != "" {
		return string(fm.Name)
	}
	return filepath.Base(dir)
}

// skillNameProblem says what is wrong with a directory skill's name, if
// anything (rule R-SK-1, R-SK-2).
func skillNameProblem(fm skillmd.Frontmatter, name, dirName string) string {
	switch {
	case fm.Name == "":
		return fmt.Sprintf("frontmatter has no name; using the directory name %q", name)
	case skillmd.CheckName(name) != "":
		return fmt.Sprintf("name %q %s", name, skillmd.CheckName(name))
	case name != dirName:
		return fmt.Sprintf("name %q differs from its directory %q", name, dirName)
	}
	return ""
}

// readSkillFile reads the SKILL.md fileRel of a skill through the skill's own
// root when it is open and the file is inside the skill, as it nearly always
// is; otherwise (a SKILL.md linked from elsewhere in the root, a missing or
// refused file) through the root, which follows links that stay inside the
// root and reports the others, as readOptional does.
func (l *dirLoader) readSkillFile(skillRoot *os.Root, fileRel string) ([]byte, error) {
	if skillRoot != nil {
		if b, err := readRegular(skillRoot, skillFileName); err == nil {
			return b, nil
		}
	}
	return l.readOptional(fileRel)
}

// skillFiles reads every file of a skill directory except its SKILL.md, in
// lexical order (R-SK-3: other .md files are files, not skills), through
// skillRoot, the skill directory opened as a root (nil: open it here).
// entries are the directory's own, as discovery listed them (nil: list them
// here). Hidden entries are left out. A regular file reached by walking the
// real directory is inside it; a symlink is followed only if it passes both
// containment checks (R-ACT-4), else it is left out with a warning. Files
// that are not UTF-8 text are kept as binary files (published
// base64-encoded), and the executable bit is kept, so nothing of a skill is
// dropped silently.
func (l *dirLoader) skillFiles(skillRoot *os.Root, rel string, entries []fs.DirEntry) ([]resources.File, error) {
	if skillRoot == nil {
		var err error
		if skillRoot, err = l.root.OpenRoot(rel); err != nil {
			return nil, fmt.Errorf("read skill %s: %w", l.file(rel), err)
		}
		defer func() { _ = skillRoot.Close() }()
	}
	if entries == nil {
		var err error
		if entries, err = readDirSorted(skillRoot, "."); err != nil {
			return nil, l.skillReadError(rel, err)
		}
	}
	var files []resources.File
	visit := func(inSkill string, d fs.DirEntry) error {
		shown := filepath.Join(rel, filepath.FromSlash(inSkill))
		if d.IsDir() || inSkill == skillFileName {
			return nil
		}
		symlink := d.Type()&fs.ModeSymlink != 0
		if !symlink && !d.Type().IsRegular() {
			l.report(shown, resources.SeverityWarning, "left out of the skill: not a regular file")
			return nil
		}
		b, perm, err := readRegularWithMode(skillRoot, inSkill)
		switch {
		case errors.Is(err, errOutsideRoot):
			l.report(shown, resources.SeverityWarning, "left out of the skill: path resolves outside the skill root through a symlink")
			return nil
		case errors.Is(err, errTooLarge):
			// Not a detail of the skill but part of it: a failure for import.
			l.report(shown, resources.SeveritySkipped, "left out of the skill: %v; 'loadout import --push' publishes it in an external source", err)
			return nil
		case err != nil && (symlink || perFileProblem(err)):
			l.report(shown, resources.SeverityWarning, "left out of the skill: %v", err)
			return nil
		case err != nil:
			return fmt.Errorf("read %s: %w", l.file(shown), err)
		}
		files = append(files, skillfile.New(path.Clean(inSkill), b, skillfile.ModeOf(uint32(perm))))
		return nil
	}
	if err := walkSkillDir(skillRoot, ".", entries, visit); err != nil {
		if err = l.skillReadError(rel, err); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// skillReadError is err met while reading the skill directory rel, or nil
// when the directory (or a file in it) went missing meanwhile: the skill
// then has the files read so far, as when fs.WalkDir met it.
func (l *dirLoader) skillReadError(rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("read skill %s: %w", l.file(rel), err)
}

// walkSkillDir calls visit for the entries of the directory dir of skillRoot, in
// order, and for the entries below each subdirectory, depth first, as
// fs.WalkDir does; it starts from entries already listed, so dir is not
// listed again. Hidden entries are passed over, a hidden directory with
// everything below it. Symbolic links are not followed (visit gets them as
// links).
func walkSkillDir(skillRoot *os.Root, dir string, entries []fs.DirEntry, visit func(inSkill string, d fs.DirEntry) error) error {
	for _, d := range entries {
		if hidden(d.Name()) {
			continue
		}
		inSkill := path.Join(dir, d.Name())
		if err := visit(inSkill, d); err != nil {
			return err
		}
		if !d.IsDir() {
			continue
		}
		sub, err := readDirSorted(skillRoot, filepath.FromSlash(inSkill))
		if err != nil {
			return err
		}
		if err := walkSkillDir(skillRoot, inSkill, sub, visit); err != nil {
			return err
		}
	}
	return nil
}
