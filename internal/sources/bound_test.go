package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sourcecache"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// hostileRegistry answers every manifest GET with a body of size bytes
// (valid JSON's opening, then spaces), announced in Content-Length or not,
// streamed from a small buffer so the server itself allocates little.
func hostileRegistry(t *testing.T, size int64, announce bool) *httptest.Server {
	t.Helper()
	srv := testnet.Serve(t, func(w http.ResponseWriter, req *http.Request) {
		if !strings.Contains(req.URL.Path, "/manifests/") {
			w.WriteHeader(http.StatusOK) // /v2/: no auth
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		if announce {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		if req.Method == http.MethodHead {
			return
		}
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		chunk[0] = '{'
		for sent := int64(0); sent < size; {
			n := min(int64(len(chunk)), size-sent)
			if _, err := w.Write(chunk[:n]); err != nil {
				return // the client hung up: the point
			}
			chunk[0] = ' '
			sent += n
		}
	})
	return srv
}

// TestFetch_HugeManifestIsRefusedBeforeItIsRead: a registry serving a
// 99 MiB manifest (the registry client would read up to 100 MiB) is refused
// with a reason naming the source and the 4 MiB bound, whether it announces
// the size (refused unread) or streams it without a length (cut off after
// 4 MiB); the fetch allocates a few MiB at most, never the manifest.
func TestFetch_HugeManifestIsRefusedBeforeItIsRead(t *testing.T) {
	const size = 99 << 20
	const bound = 32 << 20 // the 4 MiB cap read into a growing buffer, and the client's own
	for _, announce := range []bool{true, false} {
		srv := hostileRegistry(t, size, announce)
		ref := strings.TrimPrefix(srv.URL, "http://") + "/skills/huge@sha256:" + strings.Repeat("ab", 32)
		source := contract.SkillSource{OCI: &contract.OCISource{Reference: ref}}
		f := New(Options{CacheDir: t.TempDir()})

		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		_, err := f.Fetch(context.Background(), source)
		runtime.ReadMemStats(&m1)
		alloc := m1.TotalAlloc - m0.TotalAlloc
		t.Logf("Content-Length announced %v: %v; allocated %.2f MiB", announce, err, float64(alloc)/(1<<20))

		var fe *sourcecache.FetchError
		if !errors.As(err, &fe) {
			t.Fatalf("a 99 MiB manifest (Content-Length announced %v): err = %v, want a *sourcecache.FetchError", announce, err)
		}
		if !strings.Contains(fe.Error(), ref) || !strings.Contains(fe.Reason, "4 MiB") || !strings.Contains(fe.Reason, "manifest") {
			t.Errorf("the refusal %q (reason %q) does not name the source and the 4 MiB bound on manifests", fe.Error(), fe.Reason)
		}
		if announce && !strings.Contains(fe.Reason, fmt.Sprint(size)) {
			t.Errorf("reason %q does not give the announced size", fe.Reason)
		}
		if alloc > bound {
			t.Errorf("refusing a 99 MiB manifest (Content-Length announced %v) allocated %.1f MiB, want at most %d MiB",
				announce, float64(alloc)/(1<<20), bound>>20)
		}
	}
}

// TestFetch_ManifestNamingAHugeConfigBlobIsRefused: a manifest that verifies
// against its digest but names a config blob over 4 MiB is refused before
// anything else is fetched, naming the source and the bound.
func TestFetch_ManifestNamingAHugeConfigBlobIsRefused(t *testing.T) {
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:` + strings.Repeat("cd", 32) + `","size":` +
		fmt.Sprint(99<<20) + `},"layers":[]}`)
	var blobs atomic.Int64
	srv := testnet.Serve(t, func(w http.ResponseWriter, req *http.Request) {
		switch {
		case strings.Contains(req.URL.Path, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			_, _ = w.Write(manifest)
		case strings.Contains(req.URL.Path, "/blobs/"):
			blobs.Add(1)
			http.NotFound(w, req)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	ref := strings.TrimPrefix(srv.URL, "http://") + "/skills/config@sha256:" + sha256Hex(manifest)
	_, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), contract.SkillSource{OCI: &contract.OCISource{Reference: ref}})
	var fe *sourcecache.FetchError
	if !errors.As(err, &fe) || !strings.Contains(fe.Error(), ref) || !strings.Contains(fe.Reason, "config blob") || !strings.Contains(fe.Reason, "4 MiB") {
		t.Fatalf("a manifest naming a 99 MiB config blob: %v, want a refusal naming the source, the config blob and the 4 MiB bound", err)
	}
	if n := blobs.Load(); n != 0 {
		t.Errorf("%d blob requests after the refusal, want none", n)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
