package hostd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// Limits of the API listener. An agent (or anything else on the pod's
// loopback) may be hostile or broken; hostd must stay inside its memory
// limit (128Mi in the sample) and keep answering.
const (
	// MaxConcurrentRequests bounds requests with a body being served at once;
	// more wait up to queueWait, then get 503.
	MaxConcurrentRequests = 32
	// decodeBudget bounds the request bytes being decoded and evaluated at
	// once. Decoded JSON takes up to ~35× its text (a 1 MiB body of tiny
	// objects is ~34 MB of Go maps), so 2 MiB in flight keeps decoding under
	// ~70 MB however many requests arrive; small calls (the common case)
	// share it without waiting.
	decodeBudget = 2 << 20
	queueWait    = 5 * time.Second

	readHeaderTimeout = 5 * time.Second
	// readTimeout bounds reading a whole request, body included: a client
	// that trickles its body cannot hold a slot.
	readTimeout = 10 * time.Second
	// idleTimeout closes keep-alive connections that send nothing.
	idleTimeout = 60 * time.Second
)

// limiter admits requests: a slot, the body read in full (at most
// MaxBodyBytes), then a share of the decode budget as large as the body.
type limiter struct {
	slots  chan struct{}
	decode *semaphore.Weighted
}

func newLimiter() *limiter {
	return &limiter{slots: make(chan struct{}, MaxConcurrentRequests), decode: semaphore.NewWeighted(decodeBudget)}
}

var errBusy = errors.New("hostd is busy: too many concurrent requests; retry")

// wrap applies the limits to every request with a body. GET requests (the
// registry, probes, an MCP event stream) carry none and pass straight
// through, so a long-lived stream never holds a slot.
func (l *limiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		wait, cancel := context.WithTimeout(r.Context(), queueWait)
		defer cancel()
		select {
		case l.slots <- struct{}{}:
			defer func() { <-l.slots }()
		case <-wait.Done():
			writeError(w, http.StatusServiceUnavailable, errBusy)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
			return
		}
		if len(body) > MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, errTooLarge)
			return
		}
		weight := int64(max(len(body), 1))
		if err := l.decode.Acquire(wait, weight); err != nil {
			writeError(w, http.StatusServiceUnavailable, errBusy)
			return
		}
		defer l.decode.Release(weight)
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// newHTTPServer is the API listener with its timeouts. No write timeout: a
// runnable tool may take up to its own timeout (at most 5 minutes).
func newHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr: addr, Handler: h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}
