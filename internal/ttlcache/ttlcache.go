// Package ttlcache is a bounded map whose entries expire: what hostd and the
// tool Services remember for a while (fetched headers, verified callers)
// without letting a caller that sends ever-new keys grow it without end.
package ttlcache

import "time"

// Cache maps keys to values until their expiry, holding at most Max entries.
// It is not safe for concurrent use: callers hold their own lock.
type Cache[K comparable, V any] struct {
	max     int
	entries map[K]entry[V]
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns a Cache of at most maxEntries entries (at least one).
func New[K comparable, V any](maxEntries int) *Cache[K, V] {
	return &Cache[K, V]{max: max(maxEntries, 1), entries: map[K]entry[V]{}}
}

// Get returns the value of k while it has not expired at now.
func (c *Cache[K, V]) Get(k K, now time.Time) (V, bool) {
	e, ok := c.entries[k]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put keeps v under k until expires. A new key in a full cache first drops
// the entries expired at now, then arbitrary others until there is room.
func (c *Cache[K, V]) Put(k K, v V, now, expires time.Time) {
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		for key, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, key)
			}
		}
		for key := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, key)
		}
	}
	c.entries[k] = entry[V]{value: v, expires: expires}
}

// Len is the number of entries held, expired or not.
func (c *Cache[K, V]) Len() int { return len(c.entries) }
