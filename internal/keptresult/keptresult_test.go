package keptresult

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The kept answers are bounded in count, bytes and time.
func TestStore_BoundedInCountBytesAndTime(t *testing.T) {
	now := time.Unix(1000, 0)
	k := New(func() time.Time { return now })
	o := Owner{Session: "s", Call: "c"}
	big := []byte(strings.Repeat("a", MaxBytes/3))
	first := k.Keep(o, big)
	for range 3 {
		k.Keep(o, big)
	}
	if _, err := k.Get(first, o); err == nil || k.Bytes() > MaxBytes {
		t.Fatalf("the oldest answer outlived the byte bound: %d bytes kept", k.Bytes())
	}
	var last string
	for range MaxEntries + 5 {
		last = k.Keep(o, []byte("{}"))
	}
	if k.Len() != MaxEntries {
		t.Fatalf("%d answers kept, want at most %d", k.Len(), MaxEntries)
	}
	if _, err := k.Get(last, o); err != nil {
		t.Fatal("the newest answer was not kept")
	}
	now = now.Add(TTL)
	if _, err := k.Get(last, o); err == nil || k.Len() != 0 || k.Bytes() != 0 {
		t.Fatal("an answer outlived its time")
	}
	if k.Keep(o, []byte(strings.Repeat("a", MaxBytes+1))) != "" {
		t.Fatal("an answer larger than the whole store was kept")
	}
}

// An id answers only its owner: another session, another call of the same
// session, or no owner at all gets the same not-found as an unknown id.
func TestStore_AnswersOnlyTheSessionAndCallThatProducedIt(t *testing.T) {
	k := New(nil)
	owner := Owner{Session: "s1", Call: "call-1"}
	id := k.Keep(owner, []byte(`{"secret":true}`))
	if len(id) != 32 {
		t.Fatalf("id %q, want 128 random bits in hex", id)
	}
	for _, o := range []Owner{{}, {Session: "s2", Call: "call-1"}, {Session: "s1", Call: "call-2"}, {Call: "call-1"}} {
		if _, err := k.Get(id, o); !errors.Is(err, ErrNotFound) {
			t.Errorf("owner %+v read the answer: %v", o, err)
		}
	}
	if b, err := k.Get(id, owner); err != nil || string(b) != `{"secret":true}` {
		t.Fatalf("the owner: %s %v", b, err)
	}
}
