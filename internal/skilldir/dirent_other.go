//go:build !linux

package skilldir

import (
	"io/fs"
	"os"
)

// readDirEntries lists the open directory f (rel in root). Outside Linux it
// is os.File.ReadDir.
func readDirEntries(_ *os.Root, _ string, f *os.File) ([]fs.DirEntry, error) {
	return f.ReadDir(-1)
}
