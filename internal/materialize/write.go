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
// through an os.Root at out, so nothing outside out is written, whatever the
// tree or out's contents hold. Entries of out that Write does not own are
// left alone, so out may be a directory another program also uses
// (~/.claude). When the current generation already holds the tree (same
// digest), Write writes nothing.
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
	current, _ := w.root.Readlink(DataLink)
	if err := w.checkLinks(t); err != nil {
		return Result{}, err
	}
	if strings.HasPrefix(current, generationPrefix+t.digest[:digestChars]+"-") && w.linksPresent(t) {
		return Result{Generation: current, Changed: false}, nil
	}
	gen, err := w.writeGeneration(t)
	if err != nil {
		return Result{}, err
	}
	_ = w.root.Remove(dataLinkTmp)
	if err := w.root.Symlink(gen, dataLinkTmp); err != nil {
		return Result{}, w.errorf("%w", err)
	}
	if err := w.root.Rename(dataLinkTmp, DataLink); err != nil {
		return Result{}, w.errorf("swapping %s to %s: %w", DataLink, gen, err)
	}
	for _, name := range t.links {
		if _, err := w.root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			if err := w.root.Symlink(linkTarget(name), name); err != nil {
				return Result{}, w.errorf("%w", err)
			}
		}
	}
	if err := w.collect(gen, current); err != nil {
		return Result{Generation: gen, Changed: true}, err
	}
	return Result{Generation: gen, Changed: true}, nil
}

// checkLinks refuses to go on when a top-level name is something other than
// the link Write makes: replacing a directory someone else put there would
// delete their files.
func (w *writer) checkLinks(t *Tree) error {
	for _, name := range t.links {
		fi, err := w.root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return w.errorf("%w", err)
		}
		target, _ := w.root.Readlink(name)
		if fi.Mode()&fs.ModeSymlink == 0 || target != linkTarget(name) {
			return w.errorf("%s exists and is not the link %s -> %s that materialize makes; move it away", name, name, linkTarget(name))
		}
	}
	return nil
}

// linkTarget is where a top-level name points: into the current generation,
// CLAUDE.md at AGENTS.md.
func linkTarget(name string) string {
	if name == ClaudeFile {
		name = AgentsFile
	}
	return path.Join(DataLink, name)
}

func (w *writer) linksPresent(t *Tree) bool {
	for _, name := range t.links {
		if _, err := w.root.Lstat(name); err != nil {
			return false
		}
	}
	return true
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
	return gen, nil
}

func (w *writer) writeFile(name string, f File) error {
	fh, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode)
	if err != nil {
		return err
	}
	_, err = fh.Write(f.Content)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// The umask may have cleared bits of the mode; the tree's modes are kept.
	return w.root.Chmod(name, f.Mode)
}

// collect removes every generation directory (and a stale temporary link)
// except keep and previous.
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
		if !strings.HasPrefix(name, generationPrefix) || name == keep || name == previous {
			continue
		}
		if err := w.root.RemoveAll(name); err != nil {
			errs = append(errs, w.errorf("removing old generation %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
