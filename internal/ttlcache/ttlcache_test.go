package ttlcache

import (
	"testing"
	"time"
)

func TestCache_ExpiresEntries(t *testing.T) {
	c := New[string, int](4)
	now := time.Unix(1000, 0)
	c.Put("a", 1, now, now.Add(time.Minute))
	if v, ok := c.Get("a", now.Add(59*time.Second)); !ok || v != 1 {
		t.Fatalf("Get before expiry = %d, %v; want 1, true", v, ok)
	}
	if _, ok := c.Get("a", now.Add(time.Minute)); ok {
		t.Fatal("Get at expiry found the entry; want it expired")
	}
	if _, ok := c.Get("b", now); ok {
		t.Fatal("Get of a key never put found it")
	}
}

func TestCache_FullDropsExpiredFirstThenAny(t *testing.T) {
	c := New[int, int](3)
	now := time.Unix(1000, 0)
	c.Put(1, 1, now, now.Add(time.Second)) // expires first
	c.Put(2, 2, now, now.Add(time.Hour))
	c.Put(3, 3, now, now.Add(time.Hour))
	later := now.Add(time.Minute)
	c.Put(4, 4, later, later.Add(time.Hour))
	if c.Len() != 3 {
		t.Fatalf("Len = %d, want 3", c.Len())
	}
	for _, k := range []int{2, 3, 4} {
		if _, ok := c.Get(k, later); !ok {
			t.Fatalf("key %d was dropped; only the expired key 1 should have been", k)
		}
	}
	// Nothing expired now: a new key drops one live entry, never grows past the bound.
	c.Put(5, 5, later, later.Add(time.Hour))
	if c.Len() != 3 {
		t.Fatalf("Len = %d after a put into a full cache with nothing expired, want 3", c.Len())
	}
	if _, ok := c.Get(5, later); !ok {
		t.Fatal("the new key is missing")
	}
}

func TestCache_ReplacingAKeyInAFullCacheDropsNothing(t *testing.T) {
	c := New[int, int](2)
	now := time.Unix(1000, 0)
	c.Put(1, 1, now, now.Add(time.Hour))
	c.Put(2, 2, now, now.Add(time.Hour))
	c.Put(2, 20, now, now.Add(time.Hour))
	if v, ok := c.Get(1, now); !ok || v != 1 {
		t.Fatalf("key 1 = %d, %v after replacing key 2; want 1, true", v, ok)
	}
	if v, _ := c.Get(2, now); v != 20 {
		t.Fatalf("key 2 = %d, want the new value 20", v)
	}
}
