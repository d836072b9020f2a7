package sourcecache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadout-dev/loadout/internal/skillpack"
)

// MaxBlob bounds any blob read: a skill layer is at most the tree limit plus
// tar headers; a manifest is small.
const MaxBlob = skillpack.MaxTreeBytes + skillpack.MaxFiles*1024 + 1<<20

// BlobPath is where the cache under dir keeps the blob of digest
// ("sha256:<hex>"), or an error when digest is not sha256.
func BlobPath(dir, digest string) (string, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q is not sha256", digest)
	}
	return filepath.Join(dir, "blobs", "sha256", hexDigest), nil
}

// signaturesPath is where the cache keeps the signature bundles a Filler
// fetched for the artifact whose manifest has digest; they are verified at
// every read, never trusted for having been written.
func signaturesPath(dir, digest string) string {
	return filepath.Join(dir, "signatures", strings.TrimPrefix(digest, "sha256:")+".json")
}

// StoreBlob returns the blob with that digest from the cache under dir if
// the cached bytes still hash to it, else streams fetch into a temporary
// file of the cache, hashing it on the way, and renames it under its digest
// only when it verifies (and has size bytes, unless size is -1). It returns
// the verified blob open at its start, which the caller closes, and its
// path.
func StoreBlob(dir, digest string, size int64, fetch func() (io.ReadCloser, error)) (*os.File, string, error) {
	path, err := BlobPath(dir, digest)
	if err != nil {
		return nil, "", err
	}
	if blob, err := openVerified(path, size); err == nil {
		return blob, path, nil
	}
	rc, err := fetch()
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return nil, "", fmt.Errorf("cache: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(rc, MaxBlob+1))
	if err != nil {
		return nil, "", err
	}
	if n > MaxBlob {
		return nil, "", fmt.Errorf("blob %s is over %d bytes", digest, MaxBlob)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
		return nil, "", fmt.Errorf("%w: content hashes to %s, not %s", ErrVerification, got, digest)
	}
	if size >= 0 && n != size {
		return nil, "", fmt.Errorf("%w: %d bytes, the manifest says %d", ErrVerification, n, size)
	}
	if err := tmp.Sync(); err != nil {
		return nil, "", fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, "", fmt.Errorf("cache: %w", err)
	}
	// tmp is the verified blob under its new name: rewind it for the caller
	// rather than reopening path, which could be swapped after the check.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	kept = true
	return tmp, path, nil
}

// openVerified opens a cached blob (its name is its SHA-256) if it has size
// bytes (any size up to MaxBlob when size is -1) and its content, streamed,
// hashes to its name; the file is returned rewound to its start. The size
// is checked first, so a file a helper made huge is refused unread.
func openVerified(path string, size int64) (*os.File, error) {
	return openHashed(path, filepath.Base(path), size)
}

// openHashed is openVerified against hexDigest.
func openHashed(path, hexDigest string, size int64) (*os.File, error) {
	blob, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := blob.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxBlob || (size >= 0 && fi.Size() != size) {
		_ = blob.Close()
		return nil, fmt.Errorf("%w: cached blob %s is not a file of the expected size", ErrVerification, hexDigest)
	}
	h := sha256.New()
	if _, err := io.Copy(h, blob); err == nil && hex.EncodeToString(h.Sum(nil)) == hexDigest {
		if _, err := blob.Seek(0, io.SeekStart); err == nil {
			return blob, nil
		}
	}
	_ = blob.Close()
	return nil, fmt.Errorf("%w: cached blob %s does not hash to its name", ErrVerification, hexDigest)
}

// WriteAtomic writes a cache file, streamed by write, through a temporary
// file and a rename, so a crash never leaves a half-written file under its
// name.
func WriteAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
