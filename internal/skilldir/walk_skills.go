package skilldir

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/loadout-dev/loadout/internal/resources"
)

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
// directory), unless its file (real path realPath) was already found through
// another path.
func (w *skillWalk) add(kind jobKind, rel, fileRel, realPath string, entries []fs.DirEntry) {
	if first, ok := w.seen[realPath]; ok {
		w.note(jobNote, fileRel, resources.SeverityWarning, "the same file as %s (through a symbolic link): loaded once, from there", w.l.file(first))
		return
	}
	w.seen[realPath] = fileRel
	w.jobs = append(w.jobs, &skillJob{kind: kind, rel: rel, entries: entries, child: w.l.child()})
}

// walk searches the directory rel, whose real path is realPath and whose entries
// are given; stack holds the real paths of the directories being searched,
// rel's included. It returns how many skills it found.
func (w *skillWalk) walk(rel, realPath string, entries []fs.DirEntry, stack []string) (int, error) {
	w.readIgnoreFiles(rel, entries)
	if found, err := w.skillDir(rel, realPath, entries); found || err != nil {
		return 1, err
	}
	count := 0
	for _, e := range entries {
		name := e.Name()
		if hidden(name) || name == "node_modules" {
			continue
		}
		childRel, childReal := filepath.Join(rel, name), filepath.Join(realPath, name)
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

// skillDir reports whether the directory rel (real path realPath) holds a
// SKILL.md file, a link to one included, and if so records it as a skill. A
// SKILL.md that is ignored, a directory or a broken link does not make a
// skill, as in Pi; one linked from outside the root is reported and left out,
// and then nothing below rel is searched either.
func (w *skillWalk) skillDir(rel, realPath string, entries []fs.DirEntry) (bool, error) {
	i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == skillFileName })
	if i < 0 {
		return false, nil
	}
	e := entries[i]
	fileRel, fileReal := filepath.Join(rel, skillFileName), filepath.Join(realPath, skillFileName)
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
