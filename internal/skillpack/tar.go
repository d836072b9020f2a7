package skillpack

import (
	"archive/tar"
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/skillfile"
)

// epoch is the modification time of every packed entry: a fixed time keeps
// the digest a function of content alone.
var epoch = time.Unix(0, 0).UTC()

// Tar writes the tree as an uncompressed tar in USTAR/PAX form: regular files
// only (directories are implied by paths), sorted by path, with zero times,
// uid and gid and no user names. Same tree, same bytes, same digest.
// Uncompressed, because gzip headers and compressor versions would make the
// digest depend on the packer; registries compress in transit anyway.
func Tar(t Tree) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteTar(&buf, t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteTar writes the tar of Tar to w, streaming each file's content (a
// Stored one from disk), so a large tree is never held whole.
func WriteTar(w io.Writer, t Tree) error {
	if err := t.Validate(); err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, f := range t {
		if err := writeEntry(tw, f); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, f File) error {
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     f.Path,
		Mode:     int64(f.Mode),
		Size:     f.Len(),
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}
	if len(f.Path) < 100 {
		hdr.Format = tar.FormatUSTAR // no PAX record when none is needed
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	return f.CopyTo(tw)
}

// Untar reads a skill layer back into a tree, every file in memory. Only
// regular files with clean relative paths are accepted: links, devices,
// absolute or escaping paths and duplicates are refused, so unpacking can
// never write outside the skill.
func Untar(r io.Reader) (Tree, error) {
	return untar(r, func(hdr *tar.Header, data io.Reader, _ int64) (File, error) {
		// One buffer of the entry's size (bounded by untar): no growth copies.
		b := make([]byte, hdr.Size)
		if _, err := io.ReadFull(data, b); err != nil {
			return File{}, err
		}
		return skillfile.New(hdr.Name, b, normalizeMode(hdr.FileInfo().Mode())), nil
	})
}

// UntarStored reads a skill layer like Untar, streaming, but holds only
// SKILL.md in memory (it is parsed to resolve the skill): every other file
// is Stored, read from the layer file at path when opened, so the tree's
// memory does not grow with the skill's size. layer is the content of the
// file at path, from its start, that the caller has just verified (by its
// digest). Each stored file's size and SHA-256 are taken here while it
// streams by, and its reader checks them again, so a layer changed on disk
// afterwards is an error when read, never served.
func UntarStored(layer io.Reader, path string) (Tree, error) {
	buf := make([]byte, 32<<10) // one copy buffer for every file
	return untar(layer, func(hdr *tar.Header, data io.Reader, offset int64) (File, error) {
		mode := normalizeMode(hdr.FileInfo().Mode())
		if hdr.Name == skillMD {
			b := make([]byte, hdr.Size)
			if _, err := io.ReadFull(data, b); err != nil {
				return File{}, err
			}
			return skillfile.New(hdr.Name, b, mode), nil
		}
		h, text := sha256.New(), &utf8Validator{}
		n, err := io.CopyBuffer(io.MultiWriter(h, text), data, buf)
		if err != nil {
			return File{}, err
		}
		if n != hdr.Size {
			return File{}, io.ErrUnexpectedEOF
		}
		stored := &skillfile.Stored{Size: n}
		h.Sum(stored.SHA256[:0])
		stored.Open = openSection(path, offset, stored.Size, stored.SHA256)
		return File{Path: hdr.Name, Mode: mode, Binary: !text.Valid(), Stored: stored}, nil
	})
}

// skillMD is the file a skill tree always holds in memory.
const skillMD = "SKILL.md"

// readEntry turns a checked tar entry into a file; data is the entry's
// content, offset where it starts in the layer.
type readEntry func(hdr *tar.Header, data io.Reader, offset int64) (File, error)

// untar walks a skill layer: it checks every entry (type, path, limits) and
// reads each regular file with read.
func untar(r io.Reader, read readEntry) (Tree, error) {
	layer := &countingReader{r: r}
	tr := tar.NewReader(layer)
	var t Tree
	var size int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read skill layer: %w", err)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue
		default:
			return nil, fmt.Errorf("skill layer: %s: entry type %q is not a regular file", hdr.Name, hdr.Typeflag)
		}
		if err := checkEntry(hdr); err != nil {
			return nil, fmt.Errorf("skill layer: %w", err)
		}
		if size += hdr.Size; hdr.Size < 0 || size > MaxTreeBytes || len(t) >= MaxFiles {
			return nil, fmt.Errorf("skill layer: over %d files or %d bytes", MaxFiles, MaxTreeBytes)
		}
		// tar reads headers and content exactly, never ahead: the content
		// starts where the reader stands after Next.
		f, err := read(hdr, tr, layer.n)
		if err != nil {
			return nil, fmt.Errorf("skill layer: %s: %w", hdr.Name, err)
		}
		t = append(t, f)
	}
	slices.SortFunc(t, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("skill layer: %w", err)
	}
	return t, nil
}

// checkEntry refuses a regular file entry whose path could leave the skill
// or whose content is not stored plainly after its header: a sparse file's
// content is a map plus fragments, which no skill needs.
func checkEntry(hdr *tar.Header) error {
	if err := checkPath(hdr.Name); err != nil {
		return err
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return fmt.Errorf("%s: sparse files are not supported", hdr.Name)
		}
	}
	return nil
}

// countingReader counts the bytes read through it: the offset in the layer.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
