package skillpack

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/skillfile"
)

// Modes a packed file can have: the executable bit is the only mode a skill
// needs (scripts), and normalising the rest keeps the digest independent of
// the packer's umask. Git tracks the same two modes.
const (
	ModeFile       = skillfile.ModeFile
	ModeExecutable = skillfile.ModeExecutable
)

// Limits on one skill tree: far above real skill packs (the largest skill of
// anthropics/skills is 5.5 MB in 54 files), low enough that a hostile
// artifact cannot exhaust an agent pod's memory or disk.
const (
	MaxFiles     = 10000
	MaxTreeBytes = 256 << 20
	maxPathLen   = 1024
)

// File is one file of a skill tree, the project's one file shape: Path is
// slash-separated and relative to the skill directory; Mode is ModeFile or
// ModeExecutable.
type File = skillfile.File

// Tree is a skill directory: its files sorted by path. SKILL.md is one of them.
type Tree []File

// Size is the total number of data bytes, in memory or stored.
func (t Tree) Size() int64 {
	var n int64
	for _, f := range t {
		n += f.Len()
	}
	return n
}

// File returns the file at p.
func (t Tree) File(p string) (File, bool) {
	i, ok := slices.BinarySearchFunc(t, p, func(f File, p string) int { return cmp.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return t[i], true
}

// normalizeMode keeps only the executable bit.
func normalizeMode(m fs.FileMode) skillfile.Mode {
	if m&0o111 != 0 {
		return ModeExecutable
	}
	return ModeFile
}

// checkPath refuses a path that could leave the skill directory or is not in
// the one clean spelling, so a tree always materializes where it claims.
func checkPath(p string) error {
	switch {
	case p == "" || p == ".":
		return errors.New("empty path")
	case len(p) > maxPathLen:
		return fmt.Errorf("path %.40q… is over %d bytes", p, maxPathLen)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute", p)
	case strings.Contains(p, "\\"):
		return fmt.Errorf("path %q contains a backslash", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a NUL byte", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean (want %q)", p, path.Clean(p))
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q leaves the skill directory", p)
	}
	return nil
}

// Validate checks a tree: clean unique relative paths, sorted, known modes,
// within the limits, no file below another file's path.
func (t Tree) Validate() error {
	if len(t) > MaxFiles {
		return fmt.Errorf("%d files, over the limit of %d", len(t), MaxFiles)
	}
	if t.Size() > MaxTreeBytes {
		return fmt.Errorf("%d bytes, over the limit of %d", t.Size(), MaxTreeBytes)
	}
	for i, f := range t {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if f.Mode != ModeFile && f.Mode != ModeExecutable {
			return fmt.Errorf("%s: mode %o, want 0644 or 0755", f.Path, f.Mode)
		}
		if i > 0 && t[i-1].Path >= f.Path {
			return fmt.Errorf("%s: paths are not sorted and unique", f.Path)
		}
	}
	return skillfile.CheckNoFileUnderFile(t)
}

// ReadDir reads a skill directory into a tree. Every read goes through
// os.Root, so a symbolic link is followed only while it stays inside dir;
// one that leaves it is an error, never silently dropped. Hidden entries
// (".git", ".DS_Store") are left out, as when Loadout loads a directory root.
func ReadDir(dir string) (Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var t Tree
	var size int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := root.Stat(p) // follows a symlink, inside the root only
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file (a symbolic link to a directory, a device or a pipe)", p)
		}
		data, err := root.ReadFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if size += int64(len(data)); size > MaxTreeBytes || len(t) >= MaxFiles {
			return fmt.Errorf("skill directory is over %d files or %d bytes", MaxFiles, MaxTreeBytes)
		}
		t = append(t, skillfile.New(p, data, normalizeMode(info.Mode())))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read skill directory %s: %w", dir, err)
	}
	slices.SortFunc(t, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	return t, t.Validate()
}
