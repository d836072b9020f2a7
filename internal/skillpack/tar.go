package skillpack

import (
	"archive/tar"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
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
	if err := t.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range t {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Path,
			Mode:     int64(f.Mode),
			Size:     int64(len(f.Content)),
			ModTime:  epoch,
			Format:   tar.FormatPAX,
		}
		if len(f.Path) < 100 {
			hdr.Format = tar.FormatUSTAR // no PAX record when none is needed
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Untar reads a skill layer back into a tree. Only regular files with clean
// relative paths are accepted: links, devices, absolute or escaping paths and
// duplicates are refused, so unpacking can never write outside the skill.
func Untar(r io.Reader) (Tree, error) {
	tr := tar.NewReader(r)
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
		if err := checkPath(hdr.Name); err != nil {
			return nil, fmt.Errorf("skill layer: %w", err)
		}
		if size += hdr.Size; hdr.Size < 0 || size > MaxTreeBytes || len(t) >= MaxFiles {
			return nil, fmt.Errorf("skill layer: over %d files or %d bytes", MaxFiles, MaxTreeBytes)
		}
		// One buffer of the entry's size (bounded above): no growth copies.
		data := make([]byte, hdr.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, fmt.Errorf("skill layer: %s: %w", hdr.Name, err)
		}
		t = append(t, skillfile.New(hdr.Name, data, normalizeMode(hdr.FileInfo().Mode())))
	}
	slices.SortFunc(t, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("skill layer: %w", err)
	}
	return t, nil
}
