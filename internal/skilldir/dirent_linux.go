package skilldir

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// readDirEntries lists the open directory f, which is rel in root, from its
// raw entries: their d_type gives each entry's type. os.File.ReadDir on a
// directory opened through an os.Root lstats every entry instead, one more
// system call per entry (3 per skill of the benchmark tree). An entry whose
// type the file system does not record is lstat'ed through root.
func readDirEntries(root *os.Root, rel string, f *os.File) ([]fs.DirEntry, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8<<10)
	entries := []fs.DirEntry{} // never nil, as from os.File.ReadDir
	for {
		var n int
		var rerr error
		if err := raw.Read(func(fd uintptr) bool {
			for {
				if n, rerr = syscall.ReadDirent(int(fd), buf); rerr != syscall.EINTR {
					return true // a directory is never "not ready"
				}
			}
		}); err != nil {
			return entries, err
		}
		if rerr != nil {
			return entries, &fs.PathError{Op: "readdirent", Path: f.Name(), Err: rerr}
		}
		if n <= 0 {
			return entries, nil
		}
		if entries, err = appendDirents(entries, root, rel, buf[:n]); err != nil {
			return entries, err
		}
	}
}

// Offsets in struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// appendDirents appends the entries of one getdents64 buffer, "." and ".."
// and deleted entries (inode 0) left out, as os.File.ReadDir leaves them.
func appendDirents(entries []fs.DirEntry, root *os.Root, rel string, buf []byte) ([]fs.DirEntry, error) {
	for len(buf) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen < direntName || reclen > len(buf) {
			return entries, &fs.PathError{Op: "readdirent", Path: rel, Err: syscall.EINVAL}
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		name := cString(rec[direntName:])
		if binary.NativeEndian.Uint64(rec) == 0 || name == "." || name == ".." {
			continue
		}
		e := rootDirEntry{root: root, path: filepath.Join(rel, name), name: name}
		typ, known := direntMode(rec[direntType])
		if !known {
			info, err := root.Lstat(e.path)
			if err != nil {
				return entries, err
			}
			typ = info.Mode().Type()
		}
		e.typ = typ
		entries = append(entries, e)
	}
	return entries, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// direntMode is the type bits of a d_type; known is false for DT_UNKNOWN.
func direntMode(t byte) (mode fs.FileMode, known bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}
