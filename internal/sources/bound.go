package sources

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxManifestBytes bounds an OCI manifest and the config blob it names: the
// distribution spec's 4 MiB, which registries enforce on push. A skill's
// manifest is a few hundred bytes. Without it the registry client reads up
// to 100 MiB of one manifest into memory, far over a 128Mi sidecar: one
// hostile registry could OOM-kill every agent pod that names it.
const MaxManifestBytes = 4 << 20

// errManifestTooLarge is a manifest or config blob over MaxManifestBytes,
// refused before it is read (by its Content-Length or its descriptor) or as
// soon as more than that arrived (a body without a length).
type errManifestTooLarge struct {
	what string
	size int64 // -1: not announced
}

func (e errManifestTooLarge) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("the registry's %s went on past the distribution spec's bound of %d bytes (4 MiB): cut off there",
			e.what, MaxManifestBytes)
	}
	return fmt.Sprintf("the registry's %s is %d bytes, over the distribution spec's bound of %d bytes (4 MiB): refused unread",
		e.what, e.size, MaxManifestBytes)
}

// boundManifests refuses, before their body is read, registry answers to a
// manifest GET announcing more than MaxManifestBytes, and cuts off one that
// sends more than that without announcing it. Blobs are bounded where they
// are streamed to the cache (fetchInto).
type boundManifests struct{ next http.RoundTripper }

func (b boundManifests) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/manifests/") ||
		resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if resp.ContentLength > MaxManifestBytes {
		_ = resp.Body.Close()
		return nil, errManifestTooLarge{what: "manifest", size: resp.ContentLength}
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
		return 0, errManifestTooLarge{what: "manifest", size: -1}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errManifestTooLarge{what: "manifest", size: -1}
	}
	return n, err
}
