// Package skillfile is the one shape of a skill's file, shared by every
// package that holds one: the engine (objects and published skills), skill
// directories, OCI and git artifacts, and the materialized tree. It imports
// no disk or file-system package, so the engine can use it.
package skillfile

import "unicode/utf8"

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
// artifact tree).
type File struct {
	// Path is relative to the skill directory and slash-separated.
	Path string
	// Content is the file's bytes.
	Content []byte
	// Mode is ModeFile or ModeExecutable (the zero value reads as ModeFile).
	Mode Mode
	// Binary marks content published base64-encoded and never placed in a
	// prompt: bytes that are not UTF-8 text, or a Skill's binaryContent.
	Binary bool
}

// New is a file of content with mode, Binary when content is not UTF-8.
func New(path string, content []byte, mode Mode) File {
	return File{Path: path, Content: content, Mode: mode, Binary: !utf8.Valid(content)}
}

// Executable reports whether the file keeps its execute bit.
func (f File) Executable() bool { return f.Mode == ModeExecutable }

// Text is the content as text, for a prompt.
func (f File) Text() string { return string(f.Content) }
