package sources

import (
	"io"
	"net/http"
	"strings"

	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// MaxManifestBytes bounds an OCI manifest and the config blob it names
// (sourcecache.MaxManifestBytes). Without it the registry client reads up
// to 100 MiB of one manifest into memory, far over a 128Mi sidecar: one
// hostile registry could OOM-kill every agent pod that names it.
const MaxManifestBytes = sourcecache.MaxManifestBytes

// boundManifests refuses, before their body is read, registry answers to a
// manifest GET announcing more than MaxManifestBytes, and cuts off one that
// sends more than that without announcing it. Blobs are bounded where they
// are streamed to the cache (sourcecache.StoreBlob).
type boundManifests struct{ next http.RoundTripper }

func (b boundManifests) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/manifests/") ||
		resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if resp.ContentLength > MaxManifestBytes {
		_ = resp.Body.Close()
		return nil, sourcecache.ManifestTooLargeError{What: "manifest", Size: resp.ContentLength}
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxManifestBytes}
	return resp, nil
}

// cappedBody fails a read past left bytes instead of returning them.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, sourcecache.ManifestTooLargeError{What: "manifest", Size: -1}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, sourcecache.ManifestTooLargeError{What: "manifest", Size: -1}
	}
	return n, err
}
