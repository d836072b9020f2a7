package skillpack

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"unicode/utf8"
)

// ErrStoredChanged is the error of reading a stored file whose bytes on disk
// are no longer the ones verified when its layer was read.
var ErrStoredChanged = errors.New("stored content changed on disk since it was verified")

// openSection opens the size bytes at offset of the file at path, checked
// against sum while they are read.
func openSection(path string, offset, size int64, sum [sha256.Size]byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return &verifyingReader{r: io.NewSectionReader(f, offset, size), closer: f, hash: sha256.New(), size: size, want: sum, where: fmt.Sprintf("%s at offset %d", path, offset)}, nil
	}
}

// verifyingReader reads content it knows the size and SHA-256 of, and
// answers its end with ErrStoredChanged, not io.EOF, when the bytes read
// were not those: a copy of changed content fails instead of completing.
type verifyingReader struct {
	r      io.Reader
	closer io.Closer
	hash   hash.Hash
	read   int64
	size   int64
	want   [sha256.Size]byte
	where  string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.hash.Write(p[:n])
	v.read += int64(n)
	if errors.Is(err, io.EOF) && (v.read != v.size || !bytes.Equal(v.hash.Sum(nil), v.want[:])) {
		return n, fmt.Errorf("%s: %w", v.where, ErrStoredChanged)
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.closer.Close() }

// utf8Validator reports whether everything written to it, taken as one
// text, is valid UTF-8 (skillfile.New's test for Binary), holding at most
// one incomplete rune between writes rather than the content.
type utf8Validator struct {
	partial [utf8.UTFMax]byte
	n       int
	invalid bool
}

func (v *utf8Validator) Write(p []byte) (int, error) {
	written := len(p)
	// First finish a rune split across writes, one byte at a time.
	for v.n > 0 && len(p) > 0 && !v.invalid {
		v.partial[v.n], p, v.n = p[0], p[1:], v.n+1
		if utf8.FullRune(v.partial[:v.n]) {
			r, size := utf8.DecodeRune(v.partial[:v.n])
			v.invalid = r == utf8.RuneError && size <= 1
			v.n = 0
		}
	}
	if v.invalid || len(p) == 0 {
		return written, nil
	}
	// Keep back a rune the write cuts off; check the rest whole.
	end := len(p)
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				end = i
			}
			break
		}
	}
	v.invalid = !utf8.Valid(p[:end])
	v.n = copy(v.partial[:], p[end:])
	return written, nil
}

// Valid reports whether all that was written is valid UTF-8.
func (v *utf8Validator) Valid() bool { return !v.invalid && v.n == 0 }
