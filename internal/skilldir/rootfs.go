package skilldir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxRootFileBytes bounds one file read from a directory root: nothing larger
// fits in a published context (api/vocab.MaxContextBytesLimit), and reading
// it whole would let one file exhaust memory.
const maxRootFileBytes = 1 << 20

// errOutsideRoot is a path that resolves (through a symlink) outside the
// directory the caller gave. The read never happens: os.Root checks every
// component atomically, so a symlink swapped in between cannot win either.
var errOutsideRoot = errors.New("it resolves outside its root through a symbolic link; only files inside the root are read")

// errTooLarge is a file over maxRootFileBytes.
var errTooLarge = fmt.Errorf("larger than %d bytes", maxRootFileBytes)

// readRegular reads the regular file rel of root, following symlinks only
// where they stay inside root. A FIFO, device or directory is refused without
// blocking (opened non-blocking, then checked on the open file, so nothing can
// be swapped in between). errOutsideRoot and errTooLarge are per-file
// problems the caller reports; fs.ErrNotExist means no such file; anything
// else is an I/O error.
func readRegular(root *os.Root, rel string) ([]byte, error) {
	b, _, err := readRegularWithMode(root, rel)
	return b, err
}

// readRegularWithMode is readRegular that also returns the file's permission
// bits, taken from the open file: a caller that keeps the executable bit
// needs no second lookup of the path, which could also meet another file.
func readRegularWithMode(root *os.Root, rel string) ([]byte, fs.FileMode, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, classifyRootErr(root, rel, err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, errNotRegular
	}
	if info.Size() > maxRootFileBytes {
		return nil, 0, errTooLarge
	}
	b, err := readBounded(f, info.Size())
	if err != nil {
		return nil, 0, err
	}
	return b, info.Mode().Perm(), nil
}

// readBounded reads f, a regular file of size bytes by its fstat (at most
// maxRootFileBytes). It reads those size bytes into one buffer and stops,
// without the read that would confirm the end of the file (one system call
// per file): a file that grows while it is read is read as of its fstat, one
// that shrinks as far as it goes. A file whose fstat says 0 bytes (as /proc
// files do) is read to its end, refusing more than maxRootFileBytes.
func readBounded(f *os.File, size int64) ([]byte, error) {
	if size <= 0 {
		b, err := io.ReadAll(io.LimitReader(f, maxRootFileBytes+1))
		if err == nil && len(b) > maxRootFileBytes {
			return nil, errTooLarge
		}
		return b, err
	}
	b := make([]byte, min(size, maxRootFileBytes))
	n, err := io.ReadFull(f, b)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return b[:n], nil
	}
	return b, err
}

var errNotRegular = errors.New("not a regular file")

// absoluteLinkError is a path that reaches a file inside the root through an
// absolute symbolic link: os.Root refuses every absolute link, so it is
// refused as if it left the root (errors.Is(err, errOutsideRoot)), with a
// message that says why.
type absoluteLinkError struct{}

func (absoluteLinkError) Error() string {
	return "it goes through an absolute symbolic link, which is not followed even when it points inside the root; make the link relative"
}

func (absoluteLinkError) Is(target error) bool { return target == errOutsideRoot }

// classifyRootErr turns os.Root's refusal of an escaping path into
// errOutsideRoot, or an absoluteLinkError when the path resolves inside the
// root through an absolute link. os.Root does not export its error, so the
// path is checked again, lexically on the symlink-resolved form: this only
// chooses the message; the refused read stays refused whatever it finds.
func classifyRootErr(root *os.Root, rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var pe *fs.PathError
	escapes := errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
	if resolved, rerr := filepath.EvalSymlinks(filepath.Join(root.Name(), rel)); rerr == nil {
		if !insideRoot(root, resolved) {
			return errOutsideRoot
		}
		if escapes {
			return absoluteLinkError{}
		}
	}
	if escapes {
		return errOutsideRoot
	}
	return err
}

func insideRoot(root *os.Root, resolved string) bool {
	realPath, err := filepath.EvalSymlinks(root.Name())
	return err == nil && within(realPath, resolved)
}

// perFileProblem reports whether err is about one file (report it and go
// on) rather than the root as a whole (fail).
func perFileProblem(err error) bool {
	return errors.Is(err, errOutsideRoot) || errors.Is(err, errTooLarge) || errors.Is(err, errNotRegular)
}

// readDirSorted lists the directory rel of root in name order, as fs.ReadDir
// on root.FS() does, with fewer system calls: the directory is opened
// non-blocking (os.File would otherwise switch the descriptor itself, two
// calls per directory), and on Linux entries are typed from the directory
// itself rather than lstat'ed one by one (readDirEntries).
func readDirSorted(root *os.Root, rel string) ([]fs.DirEntry, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	entries, err := readDirEntries(root, rel, f)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// rootDirEntry is a directory entry listed from its raw entry, typed from
// d_type: Info looks the entry up through the root it was listed in.
type rootDirEntry struct {
	root *os.Root
	path string // relative to root
	name string
	typ  fs.FileMode
}

func (e rootDirEntry) Name() string               { return e.name }
func (e rootDirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e rootDirEntry) Type() fs.FileMode          { return e.typ }
func (e rootDirEntry) Info() (fs.FileInfo, error) { return e.root.Lstat(e.path) }
func (e rootDirEntry) String() string             { return fs.FormatDirEntry(e) }
