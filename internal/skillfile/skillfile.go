// Package skillfile is the one shape of a skill's file, shared by every
// package that holds one: the engine (objects and published skills), skill
// directories, OCI and git artifacts, and the materialized tree. It imports
// no disk or file-system package, so the engine can use it.
package skillfile

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"unicode/utf8"
)

// Mode is a skill file's permission bits: ModeFile or ModeExecutable. It
// converts to fs.FileMode where a file is written.
type Mode uint32

// The two modes a skill file has; anything else is normalised to one of them.
const (
	ModeFile       Mode = 0o644
	ModeExecutable Mode = 0o755
)

// ModeOf is ModeExecutable when any execute bit of perm is set, else
// ModeFile.
func ModeOf(perm uint32) Mode {
	if perm&0o111 != 0 {
		return ModeExecutable
	}
	return ModeFile
}

// File is one file of a skill besides its SKILL.md (or SKILL.md itself in an
// artifact tree). Its content is in memory (Content) or, for a fetched
// external skill, stored on disk (Stored); Len, Open and Bytes read either.
type File struct {
	// Path is relative to the skill directory and slash-separated.
	Path string
	// Content is the file's bytes when they are held in memory; nil when the
	// file is Stored.
	Content []byte
	// Mode is ModeFile or ModeExecutable (the zero value reads as ModeFile).
	Mode Mode
	// Binary marks content published base64-encoded and never placed in a
	// prompt: bytes that are not UTF-8 text, or a Skill's binaryContent.
	Binary bool
	// Stored, when set, holds the content instead of Content: a file of a
	// fetched skill that stays in the verified cache on disk, so a process
	// holding the skill does not hold its bytes.
	Stored *Stored
}

// Stored is content kept on disk: Size bytes that hash to SHA256. Open
// returns a reader of exactly that content, which fails (rather than end)
// when what it read is not Size bytes hashing to SHA256, so content changed
// on disk since it was verified is an error, never served.
type Stored struct {
	Size   int64
	SHA256 [32]byte
	Open   func() (io.ReadCloser, error)
}

// Len is the length of the content, in memory or stored.
func (f File) Len() int64 {
	if f.Stored != nil {
		return f.Stored.Size
	}
	return int64(len(f.Content))
}

// Open returns a reader of the content, in memory or stored; the caller
// closes it. Read a large file through it (io.Copy) rather than Bytes.
func (f File) Open() (io.ReadCloser, error) {
	if f.Stored == nil {
		return io.NopCloser(bytes.NewReader(f.Content)), nil
	}
	r, err := f.Stored.Open()
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Path, err)
	}
	return r, nil
}

// CopyTo streams the whole content to w: a stored file from disk, checked
// as it streams (a file that no longer verifies fails the copy).
func (f File) CopyTo(w io.Writer) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// Bytes is the whole content: Content, or a stored file read into memory,
// for a file that must be in memory anyway (one placed in a prompt).
func (f File) Bytes() ([]byte, error) {
	if f.Stored == nil {
		return f.Content, nil
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(f.Stored.Size) + bytes.MinRead) // room for the read that sees the end
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Path, err)
	}
	return buf.Bytes(), nil
}

// New is a file of content with mode, Binary when content is not UTF-8.
func New(path string, content []byte, mode Mode) File {
	return File{Path: path, Content: content, Mode: mode, Binary: !utf8.Valid(content)}
}

// Executable reports whether the file keeps its execute bit.
func (f File) Executable() bool { return f.Mode == ModeExecutable }

// Text is the in-memory content as text, for a prompt; a Stored file's
// content is read with Bytes.
func (f File) Text() string { return string(f.Content) }

// CheckNoFileUnderFile refuses a file whose path is also a directory of
// another file ("a" and "a/b"): no file system can hold both.
func CheckNoFileUnderFile(files []File) error {
	paths := make(map[string]bool, len(files))
	for _, f := range files {
		paths[f.Path] = true
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if paths[dir] {
				return fmt.Errorf("file %q: its directory %q is also a file", f.Path, dir)
			}
		}
	}
	return nil
}
