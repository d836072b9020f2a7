package testenv

import (
	"net/http"
	"strings"
	"sync"
)

// WriteCounter counts the mutating requests a client sends, by "VERB path",
// so tests can count writes instead of assuming them. Install it with
// rest.Config.Wrap(counter.Wrap).
type WriteCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// Wrap wraps a client's transport.
func (w *WriteCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			w.mu.Lock()
			if w.counts == nil {
				w.counts = map[string]int{}
			}
			w.counts[req.Method+" "+req.URL.Path]++
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// Matching returns the counts of the writes whose "VERB path" contains every
// fragment.
func (w *WriteCounter) Matching(fragments ...string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, n := range w.counts {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(k, f)
		}
		if ok {
			out[k] = n
		}
	}
	return out
}

// Total sums Matching.
func (w *WriteCounter) Total(fragments ...string) int {
	n := 0
	for _, c := range w.Matching(fragments...) {
		n += c
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
