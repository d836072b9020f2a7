package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// skills reads every skill directory below sub (a path relative to the root).
// Skill directories are read concurrently (the work is mostly system calls,
// which overlap even on few cores); their skills and diagnostics are then
// merged in directory order, so the result is the same as a sequential read.
func (l *dirLoader) skills(sub string) ([]Skill, error) {
	entries, err := l.readDirOptional(sub)
	if err != nil {
		return nil, err
	}
	// One job per entry that needs one: a diagnostic, or a skill to read.
	type job struct {
		rel   string
		skill bool
		child *dirLoader
		s     Skill
		ok    bool
		err   error
	}
	var jobs []*job
	for _, e := range entries {
		rel := filepath.Join(sub, e.Name())
		j := &job{rel: rel, child: l.child()}
		switch {
		case hidden(e.Name()):
			continue
		case e.Type()&fs.ModeSymlink != 0:
			j.child.report(rel, SeveritySkipped, "symbolic links are not followed when discovering skills")
		case !e.IsDir():
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			j.child.report(rel, SeveritySkipped, "not a skill: a skill is a directory holding %s", skillFileName)
		default:
			j.skill = true
		}
		jobs = append(jobs, j)
	}
	parallel(len(jobs), func(i int) {
		if j := jobs[i]; j.skill {
			j.s, j.ok, j.err = j.child.skill(j.rel)
		}
	})
	var out []Skill
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

// skill reads the skill directory rel (SPEC R-SK-2, R-SK-3). ok is false when
// the skill is skipped with a diagnostic.
func (l *dirLoader) skill(rel string) (Skill, bool, error) {
	fileRel := filepath.Join(rel, skillFileName)
	raw, err := l.readOptional(fileRel)
	if errors.Is(err, errReported) {
		return Skill{}, false, nil
	}
	if err != nil {
		return Skill{}, false, err
	}
	if raw == nil {
		l.report(rel, SeveritySkipped, "no %s: not a skill", skillFileName)
		return Skill{}, false, nil
	}
	fm, body, err := parseFrontmatter(string(raw))
	if err != nil {
		l.report(fileRel, SeveritySkipped, "%v", err)
		return Skill{}, false, nil
	}
	dir := filepath.Join(l.base, rel)
	if msg := checkDescription(string(fm.Description)); msg != "" {
		l.report(fileRel, SeveritySkipped, "description %s", msg)
		return Skill{}, false, nil
	}
	if n := utf8.RuneCountInString(string(fm.Compatibility)); n > maxCompatibilityLen {
		l.report(fileRel, SeveritySkipped, "compatibility must be at most %d characters", maxCompatibilityLen)
		return Skill{}, false, nil
	}
	name := skillName(fm, dir)
	if msg := skillNameProblem(fm, name, filepath.Base(dir)); msg != "" && !l.nameProblem(KindSkill, fileRel, msg) {
		return Skill{}, false, nil
	}
	files, err := l.skillFiles(rel)
	if err != nil {
		return Skill{}, false, err
	}
	return Skill{
		Name:          name,
		Description:   string(fm.Description),
		Body:          body,
		Files:         files,
		Dir:           dir,
		License:       string(fm.License),
		Compatibility: string(fm.Compatibility),
		Metadata:      fm.metadata(),
		AllowedTools:  []string(fm.AllowedTools),
		Origin:        l.origin(fileRel),
	}, true, nil
}

// skillName is the logical name of a directory skill: its frontmatter name, or
// the directory name when the frontmatter has none. Discovery and activation
// share it, so that R-ACT-2 compares like with like.
func skillName(fm frontmatter, dir string) string {
	if fm.Name != "" {
		return string(fm.Name)
	}
	return filepath.Base(dir)
}

// skillNameProblem says what is wrong with a directory skill's name, if
// anything (SPEC R-SK-1, R-SK-2).
func skillNameProblem(fm frontmatter, name, dirName string) string {
	switch {
	case fm.Name == "":
		return fmt.Sprintf("frontmatter has no name; using the directory name %q", name)
	case checkName(name) != "":
		return fmt.Sprintf("name %q %s", name, checkName(name))
	case name != dirName:
		return fmt.Sprintf("name %q differs from its directory %q", name, dirName)
	}
	return ""
}

// skillFiles reads every file of a skill directory except its SKILL.md, in
// lexical order (R-SK-3: other .md files are files, not skills). Hidden
// entries are left out. A regular file reached by walking the real directory
// is inside it; a symlink is followed only if it passes both containment
// checks (R-ACT-4), else it is left out with a warning. Files that are not
// UTF-8 text are kept as binary files (published base64-encoded), and the
// executable bit is kept, so nothing of a skill is dropped silently.
func (l *dirLoader) skillFiles(rel string) ([]File, error) {
	// The skill directory as a root of its own: a file of the skill must stay
	// inside the skill (R-ACT-4), checked atomically on every read.
	skillRoot, err := l.root.OpenRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("read skill %s: %w", l.file(rel), err)
	}
	defer func() { _ = skillRoot.Close() }()
	var files []File
	err = fs.WalkDir(skillRoot.FS(), ".", func(inSkill string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if inSkill == "." {
			return nil
		}
		shown := filepath.Join(rel, filepath.FromSlash(inSkill))
		switch {
		case hidden(d.Name()):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir():
			return nil
		case inSkill == skillFileName:
			return nil
		}
		symlink := d.Type()&fs.ModeSymlink != 0
		if !symlink && !d.Type().IsRegular() {
			l.report(shown, SeverityWarning, "left out of the skill: not a regular file")
			return nil
		}
		b, err := readRegular(skillRoot, inSkill)
		switch {
		case errors.Is(err, errOutsideRoot):
			l.report(shown, SeverityWarning, "left out of the skill: path resolves outside the skill root through a symlink")
			return nil
		case err != nil && (symlink || perFileProblem(err)):
			l.report(shown, SeverityWarning, "left out of the skill: %v", err)
			return nil
		case err != nil:
			return fmt.Errorf("read %s: %w", l.file(shown), err)
		}
		info, err := skillRoot.Stat(inSkill)
		if err != nil {
			return fmt.Errorf("read %s: %w", l.file(shown), err)
		}
		files = append(files, File{
			Path:       path.Clean(inSkill),
			Content:    string(b),
			Binary:     !utf8.Valid(b),
			Executable: info.Mode()&0o111 != 0,
		})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read skill %s: %w", l.file(rel), err)
	}
	return files, nil
}
