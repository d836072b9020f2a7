package hostd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/loadout-dev/loadout/internal/jsonlimit"
)

// Limits of the API listener. An agent (or anything else on the pod's
// loopback) may be hostile or broken; hostd must stay inside its memory
// limit (128Mi in the sample) and keep answering.
const (
	// MaxConcurrentRequests bounds requests with a body being served at once;
	// more wait up to Limits.QueueWait, then get 503.
	MaxConcurrentRequests = 16
	// decodeBudget bounds the memory that requests being decoded and
	// evaluated may take at once, as estimated by decodeCost before decoding.
	// Small calls (the common case) share it without waiting; a 1 MiB body
	// of tiny values costs more than the whole budget and runs alone.
	decodeBudget = 48 << 20
	// bodyBudget bounds the request bodies held at once, counted by their
	// Content-Length (MaxBodyBytes when unknown) before they are read: a
	// slot held its body until it answered, so 16 slots of 1 MiB bodies
	// waiting for the decode budget held 16 MiB. A body is now held until
	// it is decoded (readBody.drop), so two maximal bodies suffice: one
	// decoding, the next read and waiting for the decode budget (four
	// measured no faster and held 2 MiB more live, 4 MiB more at the peak,
	// docs/benchmarks.md). Small calls (the common case) hardly draw on it,
	// so slow tool calls holding slots do not starve them.
	bodyBudget = 2 * MaxBodyBytes
	// MaxJSONValues bounds the values (and keys) in one request, and in one
	// answer of a tool's Service (jsonlimit.MaxValues).
	MaxJSONValues = jsonlimit.MaxValues
)

// Limits are the API listener's connection limits. The zero value of each
// field means its default (DefaultLimits); tests and `loadout hostd` flags
// shorten or lengthen them.
type Limits struct {
	// MaxConcurrentRequests bounds requests with a body in flight.
	MaxConcurrentRequests int
	// QueueWait is how long a request waits for a slot or decode budget
	// before it is answered 503.
	QueueWait time.Duration
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a client
	// that trickles its body cannot hold a slot for longer.
	ReadTimeout time.Duration
	// IdleTimeout closes keep-alive connections that send nothing.
	IdleTimeout time.Duration
	// MCPMaxSessions bounds the MCP sessions open at once; a POST that would
	// open one more is refused (503, a JSON-RPC error saying why).
	MCPMaxSessions int
	// MCPSessionIdleTimeout closes an MCP session that received no request
	// for this long.
	MCPSessionIdleTimeout time.Duration
}

// DefaultLimits are the limits hostd runs with unless told otherwise.
var DefaultLimits = Limits{
	MaxConcurrentRequests: MaxConcurrentRequests,
	QueueWait:             5 * time.Second,
	ReadHeaderTimeout:     5 * time.Second,
	ReadTimeout:           10 * time.Second,
	IdleTimeout:           60 * time.Second,
	MCPMaxSessions:        DefaultMCPMaxSessions,
	MCPSessionIdleTimeout: DefaultMCPSessionIdleTimeout,
}

// withDefaults fills every zero field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	orDefault := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	if l.MaxConcurrentRequests <= 0 {
		l.MaxConcurrentRequests = DefaultLimits.MaxConcurrentRequests
	}
	l.QueueWait = orDefault(l.QueueWait, DefaultLimits.QueueWait)
	l.ReadHeaderTimeout = orDefault(l.ReadHeaderTimeout, DefaultLimits.ReadHeaderTimeout)
	l.ReadTimeout = orDefault(l.ReadTimeout, DefaultLimits.ReadTimeout)
	l.IdleTimeout = orDefault(l.IdleTimeout, DefaultLimits.IdleTimeout)
	if l.MCPMaxSessions <= 0 {
		l.MCPMaxSessions = DefaultLimits.MCPMaxSessions
	}
	l.MCPSessionIdleTimeout = orDefault(l.MCPSessionIdleTimeout, DefaultLimits.MCPSessionIdleTimeout)
	return l
}

// limiter admits requests: a slot, the body read in full (at most
// MaxBodyBytes), then a share of the decode budget as large as the body.
type limiter struct {
	slots     chan struct{}
	decode    *jsonlimit.Budget
	bodies    *semaphore.Weighted
	queueWait time.Duration
}

func newLimiter(l Limits) *limiter {
	return &limiter{slots: make(chan struct{}, l.MaxConcurrentRequests), decode: jsonlimit.NewBudget(decodeBudget, l.QueueWait), bodies: semaphore.NewWeighted(bodyBudget), queueWait: l.QueueWait}
}

var errTooManyValues = fmt.Errorf("request body holds more than %d JSON values and keys", MaxJSONValues)

var errBusy = jsonlimit.ErrBusy

// wrap applies the limits to every request with a body. GET requests (the
// registry, probes, an MCP event stream) carry none and pass straight
// through, so a long-lived stream never holds a slot.
func (l *limiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		wait, cancel := context.WithTimeout(r.Context(), l.queueWait)
		defer cancel()
		select {
		case l.slots <- struct{}{}:
			defer func() { <-l.slots }()
		case <-wait.Done():
			writeError(w, http.StatusServiceUnavailable, errBusy)
			return
		}
		announced := int64(MaxBodyBytes)
		if r.ContentLength >= 0 && r.ContentLength < MaxBodyBytes {
			announced = max(r.ContentLength, 1)
		}
		if err := l.bodies.Acquire(wait, announced); err != nil {
			writeError(w, http.StatusServiceUnavailable, errBusy)
			return
		}
		held := &readBody{release: func() { l.bodies.Release(announced) }}
		defer held.drop()
		body, err := readAllSized(r.Body, r.ContentLength)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
			return
		}
		if len(body) > MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, errTooLarge)
			return
		}
		values := countJSONValues(body)
		if values > MaxJSONValues {
			writeError(w, http.StatusRequestEntityTooLarge, errTooManyValues)
			return
		}
		grant, err := l.decode.Acquire(wait, decodeCost(len(body), values))
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, errBusy)
			return
		}
		defer grant.Release()
		// Answers decoded on this request's behalf (a tool Service's, a
		// webhook's) draw from the same budget through the grant.
		r = r.WithContext(jsonlimit.WithGrant(r.Context(), grant))
		held.Reader, held.data = bytes.NewReader(body), body
		r.Body = held
		next.ServeHTTP(w, r)
	})
}

// readBody is a request body the limiter read in full: handlers decode its
// bytes in place (decode) instead of reading them again, then drop it.
type readBody struct {
	*bytes.Reader
	data    []byte
	release func() // returns the body's share of the body budget
	once    sync.Once
}

// drop lets go of the body once it is decoded (or the request is answered,
// whichever is first): its bytes become garbage and its share of the body
// budget goes to the next request, instead of both waiting while hooks and
// a tool run over the decoded call.
func (b *readBody) drop() {
	b.once.Do(func() {
		b.Reader, b.data = bytes.NewReader(nil), nil
		b.release()
	})
}

func (*readBody) Close() error { return nil }

// readAllSized reads at most MaxBodyBytes+1 bytes of a body into one buffer
// sized from its Content-Length when it has one (no doubling copies), so a
// 1 MiB body costs 1 MiB, not the ~4 MiB io.ReadAll's growth allocates.
func readAllSized(r io.Reader, contentLength int64) ([]byte, error) {
	limited := io.LimitReader(r, MaxBodyBytes+1)
	if contentLength <= 0 || contentLength > MaxBodyBytes {
		return io.ReadAll(limited)
	}
	buf := make([]byte, contentLength+1)
	n, err := io.ReadFull(limited, buf)
	switch {
	case err == nil:
		// More bytes than announced: read what is left (within the cap).
		rest, err := io.ReadAll(limited)
		return append(buf[:n:n], rest...), err
	case (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) && int64(n) == contentLength:
		return buf[:n], nil
	default:
		return nil, err
	}
}

// countJSONValues counts the values and keys of a JSON text (jsonlimit.CountValues).
func countJSONValues(body []byte) int { return jsonlimit.CountValues(body) }

// decodeCost estimates the memory that decoding a body of n bytes holding
// values JSON values, and evaluating hooks over it, will hold. It is capped
// at the whole budget, so the costliest call runs alone rather than waiting
// forever.
func decodeCost(n, values int) int64 {
	return min(jsonlimit.Cost(n, values), decodeBudget)
}

// newHTTPServer is the API listener with its timeouts. No write timeout: a
// runnable tool may take up to its own timeout (at most 5 minutes).
func newHTTPServer(addr string, h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Addr: addr, Handler: h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}
