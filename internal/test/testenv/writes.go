package testenv

import (
	"net/http"
	"strings"
	"sync"
)

// Writes counts the mutating requests (every method but GET) a client
// sends, each under the key its key function gives: the core of
// WriteCounter and of the benchmarks' writes by verb, resource and
// namespace.
type Writes[K comparable] struct {
	mu     sync.Mutex
	counts map[K]int
}

// Wrap wraps a client's transport so that each mutating request is counted
// under key(req).
func (w *Writes[K]) Wrap(rt http.RoundTripper, key func(*http.Request) K) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			k := key(req)
			w.mu.Lock()
			if w.counts == nil {
				w.counts = map[K]int{}
			}
			w.counts[k]++
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// Counts returns a copy of the counts so far.
func (w *Writes[K]) Counts() map[K]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[K]int, len(w.counts))
	for k, n := range w.counts {
		out[k] = n
	}
	return out
}

// WriteCounter counts the mutating requests a client sends, by "VERB path",
// so tests can count writes instead of assuming them. Install it with
// rest.Config.Wrap(counter.Wrap).
type WriteCounter struct {
	writes Writes[string]
}

// Wrap wraps a client's transport.
func (w *WriteCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return w.writes.Wrap(rt, func(req *http.Request) string { return req.Method + " " + req.URL.Path })
}

// Matching returns the counts of the writes whose "VERB path" contains every
// fragment.
func (w *WriteCounter) Matching(fragments ...string) map[string]int {
	out := map[string]int{}
	for k, n := range w.writes.Counts() {
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
