package skilldir

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/loadout-dev/loadout/internal/resources"
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
	realPath, err := filepath.EvalSymlinks(filepath.Join(l.base, top))
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
	if _, err := w.walk(top, realPath, entries, []string{realPath}); err != nil {
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
