package materialize

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Names inside OUT that Write owns besides the top-level links.
const (
	// DataLink points at the current generation, as a ConfigMap volume's
	// "..data" does; every top-level name is a symlink through it.
	DataLink = "..data"
	// dataLinkTmp is the new DataLink before it is renamed over the old one.
	dataLinkTmp = "..data_tmp"
	// linkTmpPrefix names a top-level link before it replaces another link.
	linkTmpPrefix = "..link_tmp-"
	// generationPrefix starts every generation directory: "..gen-" then the
	// first 16 hex digits of the tree digest, "-" and a random suffix.
	generationPrefix = "..gen-"
	digestChars      = 16
)

// Result says what Write did.
type Result struct {
	// Generation is the directory DataLink points at afterwards.
	Generation string
	// Changed is false when the tree was already current and nothing was
	// written.
	Changed bool
}

// Write makes the tree at out current: it writes a new generation directory,
// swaps DataLink to it with one rename and then removes every generation but
// the new one and the one it replaced (a reader that resolved DataLink just
// before the swap can finish reading). A reader that resolves DataLink once
// sees one whole generation, never a mix. Every file system call goes
// through an os.Root at out, so nothing outside out is written or followed,
// whatever the tree or out's contents hold. Entries of out that Write does
// not own are left alone, so out may be a directory another program also
// uses (~/.claude). When the current generation already holds the tree (same
// digest) and every top-level link is in place, Write writes nothing.
//
// out may be writable by the agent that reads it (Claude Code's ~/.claude),
// so Write expects to find its own names tampered with and recovers: what
// stands at DataLink or its temporary name, whatever it is, is removed
// without being followed, and a top-level name that is a symbolic link
// other than Write's (a link holds no files) is replaced by Write's. A
// top-level name that is a real directory or file is never deleted: the
// tree is still written and swapped in, and the error names what is in the
// way, for the caller to report.
func Write(out string, t *Tree) (Result, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Result{}, fmt.Errorf("materialize %s: %w", out, err)
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return Result{}, fmt.Errorf("materialize %s: %w", out, err)
	}
	defer root.Close()
	w := &writer{root: root, out: out}
	return w.write(t)
}

type writer struct {
	root *os.Root
	out  string
}

func (w *writer) errorf(format string, args ...any) error {
	return fmt.Errorf("materialize %s: "+format, append([]any{w.out}, args...)...)
}

func (w *writer) write(t *Tree) (Result, error) {
	current := w.currentGeneration()
	if strings.HasPrefix(current, generationPrefix+t.digest[:digestChars]+"-") && w.linksCurrent(t) {
		return Result{Generation: current, Changed: false}, nil
	}
	gen, err := w.writeGeneration(t)
	if err != nil {
		return Result{}, err
	}
	if err := w.swapData(gen); err != nil {
		return Result{}, err
	}
	res := Result{Generation: gen, Changed: true}
	return res, errors.Join(w.link(t), w.collect(gen, current))
}

// currentGeneration is the generation DataLink points at, or "" when
// DataLink is not a link to a generation directory of out (missing, or
// replaced by someone else).
func (w *writer) currentGeneration() string {
	gen, err := w.root.Readlink(DataLink)
	if err != nil || !strings.HasPrefix(gen, generationPrefix) || strings.Contains(gen, "/") {
		return ""
	}
	if fi, err := w.root.Lstat(gen); err != nil || !fi.IsDir() {
		return ""
	}
	return gen
}

// swapData points DataLink at gen with one rename. DataLink and its
// temporary name are Write's own: whatever stands there (a stale link, a
// directory an agent made) is removed first, never followed.
func (w *writer) swapData(gen string) error {
	if err := w.root.RemoveAll(dataLinkTmp); err != nil {
		return w.errorf("removing %s: %w", dataLinkTmp, err)
	}
	if err := w.root.Symlink(gen, dataLinkTmp); err != nil {
		return w.errorf("%w", err)
	}
	if fi, err := w.root.Lstat(DataLink); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		if err := w.root.RemoveAll(DataLink); err != nil {
			return w.errorf("removing %s, which is not a link: %w", DataLink, err)
		}
	}
	if err := w.root.Rename(dataLinkTmp, DataLink); err != nil {
		return w.errorf("swapping %s to %s: %w", DataLink, gen, err)
	}
	return nil
}

// link puts every top-level link of t in place. A name that is missing or a
// symbolic link other than Write's gets Write's link (by rename, so a reader
// never finds the name absent); a real directory or file is left alone and
// named in the error.
func (w *writer) link(t *Tree) error {
	var errs []error
	for _, name := range t.links {
		if err := w.linkOne(name, linkTarget(name)); err != nil {
			errs = append(errs, err)
		}
	}
	if t.codex {
		errs = append(errs, w.linkSkills(t))
	}
	return errors.Join(errs...)
}

// linkOne makes name the link to target, unless a real directory or file is
// there.
func (w *writer) linkOne(name, target string) error {
	fi, err := w.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := w.root.Symlink(target, name); err != nil {
			return w.errorf("%w", err)
		}
	case err != nil:
		return w.errorf("%w", err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return w.errorf("%s exists and is not the link %s -> %s that materialize makes; it is not deleted: move it away", name, name, target)
	default:
		if got, _ := w.root.Readlink(name); got != target {
			return w.replaceLink(name, target)
		}
	}
	return nil
}

// replaceLink makes name the link to target in place of another link.
func (w *writer) replaceLink(name, target string) error {
	tmp := path.Join(path.Dir(name), linkTmpPrefix+path.Base(name))
	if err := w.root.RemoveAll(tmp); err != nil {
		return w.errorf("%w", err)
	}
	if err := w.root.Symlink(target, tmp); err != nil {
		return w.errorf("%w", err)
	}
	if err := w.root.Rename(tmp, name); err != nil {
		return w.errorf("replacing the link %s: %w", name, err)
	}
	return nil
}

// linkTarget is where a top-level name points: into the current generation.
func linkTarget(name string) string {
	return path.Join(DataLink, name)
}

// linksCurrent reports whether every top-level name is Write's link.
func (w *writer) linksCurrent(t *Tree) bool {
	for _, name := range t.links {
		if got, err := w.root.Readlink(name); err != nil || got != linkTarget(name) {
			return false
		}
	}
	return !t.codex || w.skillLinksCurrent(t)
}

// writeGeneration writes every file of t into a new generation directory and
// returns its name. A failed write leaves a partial directory that the next
// successful Write collects.
func (w *writer) writeGeneration(t *Tree) (string, error) {
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", w.errorf("%w", err)
	}
	gen := generationPrefix + t.digest[:digestChars] + "-" + hex.EncodeToString(suffix[:])
	if err := w.root.Mkdir(gen, 0o755); err != nil {
		return "", w.errorf("%w", err)
	}
	for _, dir := range []string{SkillsDir, PromptsDir} {
		if err := w.root.Mkdir(path.Join(gen, dir), 0o755); err != nil {
			return "", w.errorf("%w", err)
		}
	}
	for _, f := range t.files {
		name := path.Join(gen, f.Path)
		if err := w.root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return "", w.errorf("file %s: %w", f.Path, err)
		}
		if err := w.writeFile(name, f); err != nil {
			return "", w.errorf("file %s: %w", f.Path, err)
		}
	}
	for _, l := range t.genLinks {
		name := path.Join(gen, l.Path)
		if err := w.root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return "", w.errorf("link %s: %w", l.Path, err)
		}
		if err := w.root.Symlink(l.Target, name); err != nil {
			return "", w.errorf("link %s: %w", l.Path, err)
		}
	}
	return gen, nil
}

func (w *writer) writeFile(name string, f File) error {
	fh, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(f.Mode))
	if err != nil {
		return err
	}
	err = f.CopyTo(fh) // a stored file that no longer verifies fails here, so its generation is never swapped in
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// The umask may have cleared bits of the mode; the tree's modes are kept.
	return w.root.Chmod(name, fs.FileMode(f.Mode))
}

// collect removes every generation directory except keep and previous, and
// any temporary link a failed replaceLink left.
func (w *writer) collect(keep, previous string) error {
	dir, err := w.root.Open(".")
	if err != nil {
		return w.errorf("%w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return w.errorf("%w", err)
	}
	var errs []error
	for _, name := range names {
		owned := strings.HasPrefix(name, generationPrefix) || strings.HasPrefix(name, linkTmpPrefix)
		if !owned || name == keep || name == previous {
			continue
		}
		if err := w.root.RemoveAll(name); err != nil {
			errs = append(errs, w.errorf("removing %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
