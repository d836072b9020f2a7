package exthost

import (
	"errors"
	"sync"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

type celKey struct {
	event               vocab.HookEvent
	expression, message string
}

type celResult struct {
	handler Handler
	err     error
}

// celCache memoises compilations, errors included (a bad expression stays
// bad). It holds at most celCacheSize entries and starts over when full:
// expressions change rarely, so a full cache means stale entries, and
// recompiling the live ones once is cheap next to unbounded growth.
type celCache struct {
	mu      sync.Mutex
	entries map[celKey]celResult
}

const celCacheSize = 4096

var celPrograms = &celCache{}

func (c *celCache) get(k celKey, compile func() (Handler, error)) (Handler, error) {
	c.mu.Lock()
	r, ok := c.entries[k]
	c.mu.Unlock()
	if ok {
		return r.handler, r.err
	}
	h, err := compile() // outside the lock: compiling takes tens of microseconds
	if errors.Is(err, errCompileDeadline) {
		return h, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= celCacheSize {
		c.entries = make(map[celKey]celResult)
	}
	c.entries[k] = celResult{h, err}
	return h, err
}
