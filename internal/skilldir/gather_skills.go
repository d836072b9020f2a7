package skilldir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillmd"
)

// skills discovers and reads the skills below the directory top (relative to
// the root: "skills" in the seed layout) the way the Pi agent's loader does
// (v0.73.1, dist/core/skills.js; docs/cli.md lists what differs):
//
//   - a directory holding a SKILL.md file is one skill, and nothing below it
//     is searched (its subdirectories are its files, R-SK-3);
//   - any other directory is searched, at any depth;
//   - a *.md file directly in top is a skill of one file;
//   - hidden entries and node_modules are passed over, and so is what the
//     .gitignore, .ignore and .fdignore files met on the way exclude;
//   - symbolic links are followed while they stay inside the root (every read
//     goes through os.Root); one that leaves it is reported and left out, and
//     one that leads back to a directory being searched is not followed;
//   - a file reached twice through links is one skill, at its first path.
//
// Discovery is sequential and in name order. The skills it finds are then read
// concurrently (the work is mostly system calls, which overlap even on few
// cores), and their skills and diagnostics merged in discovery order, so the
// result is the same as a sequential read.
func (l *dirLoader) skills(top string) ([]resources.Skill, error) {
	entries, err := l.readDirOptional(top)
	if err != nil || entries == nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(l.base, top))
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", l.file(top), err)
	}
	if dir, err := l.root.OpenRoot(top); err == nil {
		l.skillsDir, l.skillsRel = dir, top
		defer func() {
			_ = dir.Close()
			l.skillsDir, l.skillsRel = nil, ""
		}()
	}
	w := &skillWalk{l: l, top: top, seen: map[string]string{}}
	if _, err := w.walk(top, real, entries, []string{real}); err != nil {
		l.adoptAll(w.jobs)
		return nil, err
	}
	jobs := w.jobs
	parallel(len(jobs), func(i int) {
		switch j := jobs[i]; j.kind {
		case jobDir:
			j.s, j.ok, j.err = j.child.skill(j.rel, j.entries)
		case jobFile:
			j.s, j.ok, j.err = j.child.fileSkill(j.rel)
		}
	})
	var out []resources.Skill
	for _, j := range jobs {
		l.adopt(j.child)
		if j.err != nil {
			return nil, j.err
		}
		if j.ok {
			out = append(out, j.s)
		}
	}
	return out, nil
}

// adoptAll adopts the diagnostics of every job.
func (l *dirLoader) adoptAll(jobs []*skillJob) {
	for _, j := range jobs {
		l.adopt(j.child)
	}
}

type jobKind int

const (
	jobNote  jobKind = iota // a diagnostic only
	jobEmpty                // a directory with no skill below it (a diagnostic)
	jobDir                  // a skill directory
	jobFile                 // a skill of one *.md file
)

// skillJob is one thing discovery found, in order: a skill to read or a
// diagnostic. child holds its diagnostics.
type skillJob struct {
	kind jobKind
	rel  string
	// entries of a skill directory, as discovery listed them: reading the
	// skill does not list the directory again.
	entries []fs.DirEntry
	child   *dirLoader
	s       resources.Skill
	ok      bool
	err     error
}

// skillWalk is one discovery below a skills directory.
type skillWalk struct {
	l    *dirLoader
	top  string
	jobs []*skillJob
	// ignore holds the patterns of the ignore files read so far, in order,
	// each prefixed with its directory as Pi prefixes them.
	ignore []gitignore.Pattern
	// seen maps the real path of each skill file found to its first path.
	seen map[string]string
}

// ignoreFileNames are the ignore files Pi honours in every directory it
// searches.
var ignoreFileNames = []string{".gitignore", ".ignore", ".fdignore"}

func (w *skillWalk) note(kind jobKind, rel string, sev resources.Severity, format string, args ...any) {
	j := &skillJob{kind: kind, rel: rel, child: w.l.child()}
	j.child.report(rel, sev, format, args...)
	w.jobs = append(w.jobs, j)
}

// add records a skill to read (with the entries of its directory, for a skill
// directory), unless its file (real path real) was already found through
// another path.
func (w *skillWalk) add(kind jobKind, rel, fileRel, real string, entries []fs.DirEntry) {
	if first, ok := w.seen[real]; ok {
		w.note(jobNote, fileRel, resources.SeverityWarning, "the same file as %s (through a symbolic link): loaded once, from there", w.l.file(first))
		return
	}
	w.seen[real] = fileRel
	w.jobs = append(w.jobs, &skillJob{kind: kind, rel: rel, entries: entries, child: w.l.child()})
}

// walk searches the directory rel, whose real path is real and whose entries
// are given; stack holds the real paths of the directories being searched,
// rel's included. It returns how many skills it found.
func (w *skillWalk) walk(rel, real string, entries []fs.DirEntry, stack []string) (int, error) {
	w.readIgnoreFiles(rel, entries)
	if found, err := w.skillDir(rel, real, entries); found || err != nil {
		return 1, err
	}
	count := 0
	for _, e := range entries {
		name := e.Name()
		if hidden(name) || name == "node_modules" {
			continue
		}
		childRel, childReal := filepath.Join(rel, name), filepath.Join(real, name)
		isDir, isFile := e.IsDir(), e.Type().IsRegular()
		if e.Type()&fs.ModeSymlink != 0 {
			info, _, err := w.followLink(childRel)
			if err != nil {
				return count, err
			}
			if info == nil {
				continue
			}
			isDir, isFile = info.IsDir(), info.Mode().IsRegular()
			if childReal, err = filepath.EvalSymlinks(filepath.Join(w.l.base, childRel)); err != nil {
				return count, fmt.Errorf("read %s: %w", w.l.file(childRel), err)
			}
		}
		if w.ignored(childRel, isDir) {
			continue
		}
		switch {
		case isDir:
			if slices.ContainsFunc(stack, func(searching string) bool { return within(childReal, searching) }) {
				w.note(jobNote, childRel, resources.SeverityWarning, "left out: a symbolic link to a directory that holds it (a cycle)")
				continue
			}
			sub, err := w.l.readDir(childRel)
			if err != nil {
				return count, fmt.Errorf("read directory %s: %w", w.l.file(childRel), classifyRootErr(w.l.root, childRel, err))
			}
			mark := len(w.jobs)
			n, err := w.walk(childRel, childReal, sub, append(stack, childReal))
			if err != nil {
				return count, err
			}
			if n == 0 {
				// Only the highest directory without a skill is reported.
				kept := w.jobs[:mark]
				for _, j := range w.jobs[mark:] {
					if j.kind != jobEmpty {
						kept = append(kept, j)
					}
				}
				w.jobs = kept
				w.note(jobEmpty, childRel, resources.SeverityWarning, "no skill in it: no %s at any depth that is not ignored", skillFileName)
			}
			count += n
		case isFile && strings.HasSuffix(name, ".md") && rel == w.top:
			w.add(jobFile, childRel, childRel, childReal, nil)
			count++
		case isFile && strings.HasSuffix(name, ".md"):
			w.note(jobNote, childRel, resources.SeverityWarning, "not a skill: a *.md file is a skill only directly in the skills directory (as in Pi)")
		}
	}
	return count, nil
}

// skillDir reports whether the directory rel (real path real) holds a
// SKILL.md file, a link to one included, and if so records it as a skill. A
// SKILL.md that is ignored, a directory or a broken link does not make a
// skill, as in Pi; one linked from outside the root is reported and left out,
// and then nothing below rel is searched either.
func (w *skillWalk) skillDir(rel, real string, entries []fs.DirEntry) (bool, error) {
	i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == skillFileName })
	if i < 0 {
		return false, nil
	}
	e := entries[i]
	fileRel, fileReal := filepath.Join(rel, skillFileName), filepath.Join(real, skillFileName)
	isFile := e.Type().IsRegular()
	if e.Type()&fs.ModeSymlink != 0 {
		info, outside, err := w.followLink(fileRel)
		switch {
		case err != nil:
			return false, err
		case outside:
			return true, nil
		case info == nil:
			return false, nil
		}
		isFile = info.Mode().IsRegular()
		if fileReal, err = filepath.EvalSymlinks(filepath.Join(w.l.base, fileRel)); err != nil {
			return false, fmt.Errorf("read %s: %w", w.l.file(fileRel), err)
		}
	}
	if !isFile || w.ignored(fileRel, false) {
		return false, nil
	}
	w.add(jobDir, rel, fileRel, fileReal, entries)
	return true, nil
}

// followLink stats the target of the symbolic link rel through the root. A
// link that leaves the root is reported as skipped (outside is true) and a
// broken one as a warning; both return a nil FileInfo. Pi follows the first
// and passes over the second silently.
func (w *skillWalk) followLink(rel string) (info fs.FileInfo, outside bool, err error) {
	info, err = w.l.root.Stat(rel)
	if err == nil {
		return info, false, nil
	}
	if _, rerr := filepath.EvalSymlinks(filepath.Join(w.l.base, rel)); errors.Is(rerr, fs.ErrNotExist) {
		w.note(jobNote, rel, resources.SeverityWarning, "left out: a broken symbolic link")
		return nil, false, nil
	}
	if err = classifyRootErr(w.l.root, rel, err); errors.Is(err, errOutsideRoot) {
		w.note(jobNote, rel, resources.SeveritySkipped, "left out: %v", err)
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("read %s: %w", w.l.file(rel), err)
}

// fromTop is rel relative to the skills directory, slash-separated: the path
// ignore patterns match.
func (w *skillWalk) fromTop(rel string) string {
	r, err := filepath.Rel(w.top, rel)
	if err != nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(r)
}

// readIgnoreFiles adds the patterns of the ignore files among the entries of
// the directory rel, each prefixed with rel as Pi prefixes them (so that "x"
// in a/.gitignore becomes "a/x", matched from the skills directory). An
// ignore file that cannot be read is reported; Pi passes over it silently.
func (w *skillWalk) readIgnoreFiles(rel string, entries []fs.DirEntry) {
	prefix := ""
	if r := w.fromTop(rel); r != "." {
		prefix = r + "/"
	}
	for _, name := range ignoreFileNames {
		if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name }) {
			continue
		}
		fileRel := filepath.Join(rel, name)
		b, err := readRegular(w.l.root, fileRel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			w.note(jobNote, fileRel, resources.SeverityWarning, "ignore file not read: %v", classifyRootErr(w.l.root, fileRel, err))
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if p, ok := ignorePattern(strings.TrimSuffix(line, "\r"), prefix); ok {
				w.ignore = append(w.ignore, gitignore.ParsePattern(p, nil))
			}
		}
	}
}

// ignorePattern is Pi's prefixIgnorePattern: blank lines and comments are
// dropped; a leading "!" negates, "\!" escapes it, a leading "/" is dropped,
// and the pattern is prefixed with the directory of its ignore file.
func ignorePattern(line, prefix string) (string, bool) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return "", false
	}
	p, negated := line, false
	switch {
	case strings.HasPrefix(p, "!"):
		p, negated = p[1:], true
	case strings.HasPrefix(p, "\\!"):
		p = p[1:]
	}
	p = prefix + strings.TrimPrefix(p, "/")
	if negated {
		p = "!" + p
	}
	return p, true
}

// ignored reports whether the ignore patterns read so far exclude rel.
func (w *skillWalk) ignored(rel string, isDir bool) bool {
	return len(w.ignore) > 0 && gitignore.NewMatcher(w.ignore).Match(strings.Split(w.fromTop(rel), "/"), isDir)
}

// skillReaders bounds the skill directories read at once.
const skillReaders = 8

// parallel runs f(0) … f(n-1) on up to skillReaders goroutines and waits.
func parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, skillReaders) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

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
