// Package jsonlimit bounds the memory that decoding untrusted JSON may take,
// before it is decoded: a count of the values and keys of a text (which,
// decoded, cost far more than their bytes) and a shared decode budget that
// every request and every answer hostd decodes draws from; and a decoder
// (Decode, decode.go) that builds what encoding/json builds for an `any`
// with less garbage, refusing duplicate keys.
package jsonlimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Decoding a JSON text into Go values costs about three times the bytes of
// its strings and about 256 bytes per JSON value (measured: a 1 MiB list of
// 350k empty objects allocates ~100 MB).
const (
	CostPerByte  = 3
	CostPerValue = 256
)

// MaxValues bounds the values (and keys) in one request or answer. Decoded,
// a value costs far more than its text: 1 MiB of empty objects is 350k
// values and ~100 MB of Go memory. 100k values is far more than any tool
// call, result or answer carries, and keeps the costliest near 30 MB.
const MaxValues = 100_000

// CountValues counts, without allocating, the values and keys of a JSON
// text: objects, arrays, strings (keys included) and the literals (numbers,
// true, false, null) between them. Invalid JSON gets some count and fails
// decoding later.
func CountValues(body []byte) int {
	values, inString, escaped, inLiteral := 0, false, false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString, inLiteral = true, false
			values++
		case c == '{' || c == '[':
			inLiteral = false
			values++
		case c == '-' || c == '+' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || c == 'E':
			if !inLiteral {
				values++
			}
			inLiteral = true
		default:
			inLiteral = false
		}
	}
	return values
}

// Cost estimates the memory that decoding a text of n bytes holding values
// JSON values, and working over the result, will hold.
func Cost(n, values int) int64 {
	return CostPerByte*int64(n) + CostPerValue*int64(values)
}

// ErrBusy is returned when the budget had no room within the caller's wait.
var ErrBusy = errors.New("hostd is busy: too many concurrent requests; retry")

// Budget is a decode budget shared by everything one process decodes.
type Budget struct {
	sem   *semaphore.Weighted
	total int64
	wait  time.Duration
}

// NewBudget returns a budget of total bytes. A grant waits at most wait
// (when positive) to grow.
func NewBudget(total int64, wait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(total), total: total, wait: wait}
}

// Total is the budget's size.
func (b *Budget) Total() int64 { return b.total }

// Acquire waits (until ctx is done) for weight bytes of the budget, capped
// at the whole budget so the costliest request runs alone rather than
// waiting forever. The Grant holds them until Release.
func (b *Budget) Acquire(ctx context.Context, weight int64) (*Grant, error) {
	weight = min(max(weight, 0), b.total)
	if err := b.sem.Acquire(ctx, weight); err != nil {
		return nil, ErrBusy
	}
	return &Grant{budget: b, held: weight}, nil
}

// Grant is the part of a Budget one request holds: what decoding its body
// costs, grown by what decoding the answers it waits for costs.
type Grant struct {
	budget *Budget
	mu     sync.Mutex
	held   int64
}

// Grow adds weight bytes to the grant, waiting (until ctx is done) for
// them. The grant never exceeds the whole budget: a request that already
// holds all of it decodes its answers inside what it holds.
func (g *Grant) Grow(ctx context.Context, weight int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	extra := min(g.held+max(weight, 0), g.budget.total) - g.held
	if extra <= 0 {
		return nil
	}
	if g.budget.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.budget.wait)
		defer cancel()
	}
	if err := g.budget.sem.Acquire(ctx, extra); err != nil {
		return ErrBusy
	}
	g.held += extra
	return nil
}

// Held is what the grant holds now.
func (g *Grant) Held() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// Release gives everything the grant holds back to the budget.
func (g *Grant) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.budget.sem.Release(g.held)
	g.held = 0
}

type grantKey struct{}

// WithGrant returns ctx carrying g, so code that decodes on the request's
// behalf (a tool Service's answer) draws from the same budget.
func WithGrant(ctx context.Context, g *Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

// GrantFrom returns the grant ctx carries, or nil.
func GrantFrom(ctx context.Context) *Grant {
	g, _ := ctx.Value(grantKey{}).(*Grant)
	return g
}

// Admit checks an answer of body before it is decoded: at most maxValues
// values and keys, then room in the grant ctx carries (if any) for decoding
// it. It returns the number of values counted and, when it refuses, an
// error saying which limit the answer broke.
func Admit(ctx context.Context, body []byte, maxValues int) (int, error) {
	values := CountValues(body)
	if values > maxValues {
		return values, &LimitError{Values: values, MaxValues: maxValues}
	}
	if g := GrantFrom(ctx); g != nil {
		if err := g.Grow(ctx, Cost(len(body), values)); err != nil {
			return values, err
		}
	}
	return values, nil
}

// LimitError is a JSON text with more values and keys than allowed.
type LimitError struct {
	Values, MaxValues int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("holds %d JSON values and keys, over the limit of %d", e.Values, e.MaxValues)
}
