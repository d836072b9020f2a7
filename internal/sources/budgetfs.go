package sources

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/go-git/go-billy/v5"

	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// budgetFS is a filesystem whose files, together, may receive at most a
// fixed number of bytes: the clone store of a git fetch. A server that sends
// a pack without end fails the fetch with errFetchTooLarge instead of filling
// the cache volume (the pod's emptyDir, whose overflow evicts the pod).
type budgetFS struct {
	billy.Filesystem
	left *atomic.Int64
	max  int64
}

// errFetchTooLarge is what a write over the budget returns.
type errFetchTooLarge struct{ max int64 }

func (e errFetchTooLarge) Error() string {
	return fmt.Sprintf(sourcecache.ReasonFetchTooLarge, e.max)
}

func newBudgetFS(fs billy.Filesystem, budget int64) *budgetFS {
	left := new(atomic.Int64)
	left.Store(budget)
	return &budgetFS{Filesystem: fs, left: left, max: budget}
}

func (b *budgetFS) wrap(f billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return &budgetFile{File: f, fs: b}, nil
}

func (b *budgetFS) Create(name string) (billy.File, error) { return b.wrap(b.Filesystem.Create(name)) }

func (b *budgetFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return b.wrap(b.Filesystem.OpenFile(name, flag, perm))
}

func (b *budgetFS) TempFile(dir, prefix string) (billy.File, error) {
	return b.wrap(b.Filesystem.TempFile(dir, prefix))
}

// Chroot keeps the budget: a sub-filesystem shares what is left.
func (b *budgetFS) Chroot(path string) (billy.Filesystem, error) {
	fs, err := b.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return &budgetFS{Filesystem: fs, left: b.left, max: b.max}, nil
}

type budgetFile struct {
	billy.File
	fs *budgetFS
}

func (f *budgetFile) Write(p []byte) (int, error) {
	if f.fs.left.Add(-int64(len(p))) < 0 {
		return 0, errFetchTooLarge{max: f.fs.max}
	}
	return f.File.Write(p)
}
