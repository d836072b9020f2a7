// Package exepages gives back the resident pages of a process's own
// executable that only its start-up touched.
//
// A Go binary's text and read-only data are mapped from its file, and Linux
// maps such pages in blocks around each fault (fault-around), so package
// initialisation, flag parsing and a first load leave far more of the binary
// resident than a long-running process touches again. Release drops the
// clean, private, file-backed mappings of the executable from the process's
// page tables (MADV_DONTNEED). The pages stay in the page cache: a page used
// again is mapped back by a minor fault, with no disk read.
package exepages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Release drops the executable's clean file-backed mappings from the
// process's resident set and returns how many bytes were resident in them
// before. It changes nothing a program can observe but time: only mappings
// that are neither writable nor hold a private copy of any page (smaps
// "Anonymous: 0 kB") are dropped, so a re-fault reads the same bytes from
// the file. Where /proc or madvise are not there it does nothing; it
// returns no error, since nothing depends on it.
func Release() int64 {
	mappings, ok := own()
	if !ok {
		return 0
	}
	var released int64
	for _, m := range mappings {
		if m.Writable || m.Anonymous != 0 || m.Rss == 0 {
			continue
		}
		if madvise(m.Start, m.End, unix.MADV_DONTNEED) == nil {
			released += m.Rss
		}
	}
	return released
}

// Resident returns how many bytes of the executable's read-only mappings
// (its text and read-only data) are resident; false where /proc cannot say.
func Resident() (int64, bool) {
	mappings, ok := own()
	var rss int64
	for _, m := range mappings {
		if !m.Writable {
			rss += m.Rss
		}
	}
	return rss, ok
}

// own returns the private mappings of the running executable.
func own() ([]Mapping, bool) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, false
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, false
	}
	return Mappings(smaps, exe), true
}

// Mapping is one mapping of a file in /proc/PID/smaps, with the sizes that
// say whether its pages are the file's own.
type Mapping struct {
	Start, End uintptr
	Writable   bool
	// Rss and Anonymous are in bytes: resident, and resident as a private
	// copy (written, or a relocation) that the file does not hold.
	Rss, Anonymous int64
}

// Mappings parses smaps (the text of /proc/PID/smaps) and returns the
// private mappings of the file at path.
func Mappings(smaps []byte, path string) []Mapping {
	var out []Mapping
	var cur *Mapping
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if m, ok := header(fields, path); ok {
			out = append(out, m)
			cur = &out[len(out)-1]
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			cur = nil // another file's mapping, or an anonymous one
			continue
		}
		if cur == nil || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			cur.Rss = kb << 10
		case "Anonymous:":
			cur.Anonymous = kb << 10
		}
	}
	return out
}

// header parses a mapping's first line ("start-end perms offset dev inode
// path") when it maps path privately.
func header(fields []string, path string) (Mapping, bool) {
	if len(fields) != 6 || fields[5] != path || len(fields[1]) != 4 || fields[1][3] != 'p' {
		return Mapping{}, false
	}
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok {
		return Mapping{}, false
	}
	s, err1 := strconv.ParseUint(start, 16, 64)
	e, err2 := strconv.ParseUint(end, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return Mapping{}, false
	}
	return Mapping{Start: uintptr(s), End: uintptr(e), Writable: fields[1][1] == 'w'}, true
}

// madvise advises the kernel on the memory from start to end, an address
// range of smaps rather than a Go slice (unix.Madvise takes a slice).
func madvise(start, end uintptr, advice int) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}
