package controllers

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// acceptRecorder records the Accept header of every GET of one path (a
// collection's list and watch requests).
type acceptRecorder struct {
	path    string
	mu      sync.Mutex
	accepts []string
}

func (a *acceptRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && req.URL.Path == a.path {
			a.mu.Lock()
			a.accepts = append(a.accepts, req.Header.Get("Accept"))
			a.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (a *acceptRecorder) recorded() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.accepts...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Every controller watches Namespaces as metadata only: the manager never
// caches a full Namespace (the Workspace controller maps label changes, the
// Extension validation re-checks trust on a label change and reads the trust
// label). An Extension check in a fresh namespace makes the validation
// controller read its Namespace, so a full informer would show up here.
func TestManagerWatchesNamespacesAsMetadataOnly(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	ext := testenv.Extension(ns, "watch-probe", nil, testenv.CELHook("ok", vocab.BeforeToolCall, "true"))
	kit.Create(t, ext)
	waitValid(t, ext, metav1.ConditionTrue)
	deadline := time.Now().Add(10 * time.Second)
	for len(namespaceReads.recorded()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	accepts := namespaceReads.recorded()
	if len(accepts) == 0 {
		t.Fatal("the manager never listed or watched Namespaces")
	}
	for _, a := range accepts {
		if !strings.Contains(a, "as=PartialObjectMetadata") {
			t.Errorf("a Namespace list or watch asked for full objects (Accept %q)", a)
		}
	}
}
