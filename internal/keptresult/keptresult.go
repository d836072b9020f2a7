// Package keptresult keeps the whole answers of truncated tool calls for a
// while (docs/hostd.md, "Output"): bounded in count, bytes and time, each
// answered only to the session and call that produced it.
//
// hostd hands the agent a cut answer and names where the whole one is; that
// name alone must not be a key to it. An id that leaks (a transcript, a log,
// another session of the same pod) reads nothing without its owner.
package keptresult

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Bounds of a Store: an answer is kept for TTL, the oldest dropped first
// when more than MaxBytes or MaxEntries are kept.
const (
	TTL        = 10 * time.Minute
	MaxBytes   = 8 << 20
	MaxEntries = 32
)

// ErrNotFound answers an id that is not kept, has expired, or belongs to
// another owner: the three are not told apart, so an id's existence leaks
// nothing either.
var ErrNotFound = errors.New("no such kept result")

// Owner is who may read a kept answer: the session and the call that
// produced it. Over MCP, Session is the MCP session and Call is empty (a
// resource read carries no call id).
type Owner struct {
	Session string
	Call    string
}

func (o Owner) equal(p Owner) bool {
	return subtle.ConstantTimeCompare([]byte(o.Session), []byte(p.Session)) == 1 &&
		subtle.ConstantTimeCompare([]byte(o.Call), []byte(p.Call)) == 1
}

type entry struct {
	id      string
	owner   Owner
	body    []byte
	expires time.Time
}

// Store holds kept answers; safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	now   func() time.Time
	order []*entry // oldest first
	bytes int
}

// New returns an empty Store with now as its clock (nil: time.Now).
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{now: now}
}

// Keep stores body for owner and returns its id (128 random bits), or ""
// when it cannot be kept (larger than the whole store).
func (k *Store) Keep(owner Owner, body []byte) string {
	if len(body) > MaxBytes {
		return ""
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	e := &entry{id: hex.EncodeToString(b[:]), owner: owner, body: body, expires: k.now().Add(TTL)}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expire()
	for len(k.order) > 0 && (len(k.order) >= MaxEntries || k.bytes+len(body) > MaxBytes) {
		k.bytes -= len(k.order[0].body)
		k.order = k.order[1:]
	}
	k.order = append(k.order, e)
	k.bytes += len(body)
	return e.id
}

// Get returns the answer id names, while it is kept, to its owner only.
func (k *Store) Get(id string, owner Owner) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expire()
	for _, e := range k.order {
		if e.id == id && e.owner.equal(owner) {
			return e.body, nil
		}
	}
	return nil, ErrNotFound
}

// Len is the number of answers held.
func (k *Store) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.order)
}

// Bytes is the size of the answers held.
func (k *Store) Bytes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bytes
}

// expire drops the answers past their time. The caller holds mu.
func (k *Store) expire() {
	now := k.now()
	i := 0
	for i < len(k.order) && !now.Before(k.order[i].expires) {
		k.bytes -= len(k.order[i].body)
		i++
	}
	k.order = k.order[i:]
}
