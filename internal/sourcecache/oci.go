package sourcecache

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// maxSignatures bounds the cached signature bundles of one artifact: as many
// referrers as a fetch reads, each of the size it reads, JSON-encoded.
const maxSignatures = 16 * 64 << 10 * 2

// ManifestDigest is the digest ("sha256:<hex>") a reference
// (REGISTRY/REPOSITORY@sha256:<hex>) pins, or an error when it pins none.
func ManifestDigest(reference string) (string, error) {
	_, digest, ok := strings.Cut(reference, "@")
	if !ok {
		return "", fmt.Errorf("reference %q must be pinned by digest", reference)
	}
	if _, err := BlobPath("", digest); err != nil {
		return "", fmt.Errorf("reference %q must be pinned by a sha256 digest", reference)
	}
	return digest, nil
}

// ociManifest reads the cached manifest reference pins and returns its
// digest and its layer's descriptor.
func ociManifest(dir, reference string) (string, skillpack.Descriptor, error) {
	digest, err := ManifestDigest(reference)
	if err != nil {
		return "", skillpack.Descriptor{}, err
	}
	path, _ := BlobPath(dir, digest)
	blob, err := openVerified(path, -1)
	if err != nil {
		return "", skillpack.Descriptor{}, fmt.Errorf("manifest: %w", err)
	}
	defer blob.Close()
	raw, err := io.ReadAll(io.LimitReader(blob, MaxManifestBytes+1))
	if err != nil {
		return "", skillpack.Descriptor{}, fmt.Errorf("manifest: %w", err)
	}
	if len(raw) > MaxManifestBytes {
		return "", skillpack.Descriptor{}, ManifestTooLargeError{What: "manifest", Size: int64(len(raw))}
	}
	if m, err := skillpack.ParseManifest(raw); err == nil && m.Config.Size > MaxManifestBytes {
		// Never fetched, but a manifest naming one is not a skill's.
		return "", skillpack.Descriptor{}, ManifestTooLargeError{What: "config blob", Size: m.Config.Size}
	}
	layer, err := skillpack.LayerOf(raw)
	return digest, layer, err
}

// checkSigned verifies the cached signature bundles of the artifact whose
// manifest has digest against signers.
func checkSigned(dir, digest string, signers sigcheck.Verifier) error {
	var bundles [][]byte
	if raw, err := published.ReadFileBounded(signaturesPath(dir, digest), maxSignatures); err == nil {
		if err := json.Unmarshal(raw, &bundles); err != nil {
			bundles = nil
		}
	}
	return signers.Verify(digest, bundles)
}

// readOCI reads the artifact reference pins from the cache: its manifest by
// that digest, its signatures when signers is set, and its layer by the
// manifest's digest and size.
func readOCI(dir, reference string, signers sigcheck.Verifier) (skillpack.Tree, error) {
	digest, layer, err := ociManifest(dir, reference)
	if err != nil {
		return nil, err
	}
	if signers != nil {
		if err := checkSigned(dir, digest, signers); err != nil {
			return nil, err
		}
	}
	path, _ := BlobPath(dir, layer.Digest)
	blob, err := openVerified(path, layer.Size)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	defer blob.Close()
	return skillpack.UntarStored(blob, path)
}
