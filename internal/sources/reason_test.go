package sources

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sourcecache"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// remoteMarker stands for anything a remote could put in an error body: a
// cloud metadata answer, an internal page, a token.
const remoteMarker = "REMOTE-BODY-MARKER-7f3a"

func ociSource(host string) contract.SkillSource {
	return contract.SkillSource{OCI: &contract.OCISource{Reference: host + "/skills/pdf@sha256:" + strings.Repeat("a", 64)}}
}

// The reason of a failed fetch is made of fixed phrases and a status code,
// never of what the remote answered, whatever status and body it chose; the
// full error (for the log) still has it.
func TestFetch_ReasonNeverCarriesTheRemoteBody(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusNotFound, http.StatusUnauthorized, http.StatusTeapot} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(remoteMarker + ` {"errors":[{"code":"DENIED","message":"` + remoteMarker + `"}]}`))
		}))
		_, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), ociSource(strings.TrimPrefix(srv.URL, "http://")))
		srv.Close()
		var fe *sourcecache.FetchError
		if !errors.As(err, &fe) {
			t.Fatalf("HTTP %d: err = %v, want a *sourcecache.FetchError", status, err)
		}
		if strings.Contains(fe.Reason, remoteMarker) || strings.Contains(Reason(err), remoteMarker) {
			t.Errorf("HTTP %d: reason %q quotes the remote body", status, fe.Reason)
		}
		if !strings.Contains(fe.Reason, "HTTP") || !strings.Contains(fe.Source, "skills/pdf") {
			t.Errorf("HTTP %d: reason %q / source %q do not say what failed", status, fe.Reason, fe.Source)
		}
	}
}

// A registry that accepts the connection and never answers holds up only
// the fetch whose context bounds it: a fetch of a cached source on the same
// Fetcher at the same time completes at once.
func TestFetch_AHungSourceHoldsUpOnlyItsOwnFetch(t *testing.T) {
	hungAddr := testnet.Hung(t)

	reg := newTestRegistry(t)
	dir := t.TempDir()
	writeTree(t, dir, skillpack.Tree{{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: []byte("---\nname: good\ndescription: Good.\n---\nbody\n")}})
	good := reg.push(t, dir, "skills/good")
	f := New(Options{CacheDir: t.TempDir()})
	if _, err := f.Fetch(context.Background(), good); err != nil {
		t.Fatal(err)
	}

	hung := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := f.Fetch(ctx, ociSource(hungAddr))
		hung <- err
	}()
	time.Sleep(100 * time.Millisecond) // the hung fetch is under way
	start := time.Now()
	if _, err := f.Fetch(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a cached fetch waited %s behind a hung source", d)
	}
	err := <-hung
	if got := Reason(err); got != "no answer within the fetch deadline" {
		t.Fatalf("hung source: reason %q (err %v)", got, err)
	}
}
