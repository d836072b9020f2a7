package ownwrites

import (
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var owner = types.NamespacedName{Namespace: "team", Name: "dev"}

func child(hash, rv string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Annotations: map[string]string{vocab.ContextHashAnnotation: hash}, ResourceVersion: rv}
}

func TestLog_EventOfOurLastWriteIsOursALaterOneIsNot(t *testing.T) {
	l := &Log{}
	if l.Ours(owner, child("h1", "10")) {
		t.Fatal("an event before any write was taken for ours")
	}
	if _, err := l.Write(owner, "h1", "", func() (string, error) { return "10", nil }); err != nil {
		t.Fatal(err)
	}
	if !l.Ours(owner, child("h1", "10")) {
		t.Error("the event of our write (resourceVersion 10) was not taken for ours")
	}
	if l.Ours(owner, child("h1", "11")) {
		t.Error("a later write by someone else that kept the hash (resourceVersion 11) was taken for ours")
	}
	if l.Ours(types.NamespacedName{Namespace: "team", Name: "other"}, child("h1", "10")) {
		t.Error("another owner's event was taken for ours")
	}
}

// The watch event of our own write can arrive before the write returns: it
// carries the hash being written, so it is ours; had it another
// resourceVersion than the write returned, someone else wrote meanwhile.
func TestLog_EventDuringTheWriteIsOursAndOverlapIsDetected(t *testing.T) {
	for _, tc := range []struct {
		name           string
		eventHash      string
		eventRV        string
		wantOurs       bool
		wantOverlapped bool
	}{
		{name: "our own event arrives first", eventHash: "h2", eventRV: "20", wantOurs: true},
		{name: "someone else wrote the same hash meanwhile", eventHash: "h2", eventRV: "19", wantOurs: true, wantOverlapped: true},
		{name: "someone else wrote other content meanwhile", eventHash: "other", eventRV: "19"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Log{}
			var ours bool
			overlapped, err := l.Write(owner, "h2", "", func() (string, error) {
				ours = l.Ours(owner, child(tc.eventHash, tc.eventRV))
				return "20", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if ours != tc.wantOurs || overlapped != tc.wantOverlapped {
				t.Errorf("ours=%v overlapped=%v, want ours=%v overlapped=%v", ours, overlapped, tc.wantOurs, tc.wantOverlapped)
			}
		})
	}
}

func TestLog_FailedWriteRecordsNothing(t *testing.T) {
	l := &Log{}
	_, err := l.Write(owner, "h1", "", func() (string, error) { return "", errors.New("conflict") })
	if err == nil {
		t.Fatal("the write's error was lost")
	}
	if l.Ours(owner, child("h1", "")) || l.Current(owner, "h1", child("h1", "")) {
		t.Error("a failed write left a record behind")
	}
}

func TestLog_CurrentOnlyForOurLastWriteOfThisHash(t *testing.T) {
	l := &Log{}
	if l.Current(owner, "h1", child("h1", "5")) {
		t.Error("a child we never wrote is current (a restarted manager must apply once)")
	}
	_, _ = l.Write(owner, "h1", "", func() (string, error) { return "5", nil })
	for _, tc := range []struct {
		hash, childHash, rv string
		want                bool
	}{
		{"h1", "h1", "5", true},
		{"h2", "h1", "5", false}, // new content to publish
		{"h1", "h1", "6", false}, // edited by hand after our write
		{"h1", "x", "5", false},
	} {
		if got := l.Current(owner, tc.hash, child(tc.childHash, tc.rv)); got != tc.want {
			t.Errorf("Current(%s, child %s@%s) = %v, want %v", tc.hash, tc.childHash, tc.rv, got, tc.want)
		}
	}
}

func TestLog_StatusWrittenNeedsSameUIDAndDigest(t *testing.T) {
	l := &Log{}
	d := sha256.Sum256([]byte("status"))
	if l.StatusWritten(owner, "u1", d) {
		t.Error("a status never patched reads as written")
	}
	l.RecordStatus(owner, "u1", d)
	if !l.StatusWritten(owner, "u1", d) {
		t.Error("the status just patched does not read as written")
	}
	if l.StatusWritten(owner, "u2", d) {
		t.Error("a re-created owner (new UID) with the same status reads as written")
	}
	if l.StatusWritten(owner, "u1", sha256.Sum256([]byte("other"))) {
		t.Error("another status reads as written")
	}
	l.Forget(owner)
	if l.StatusWritten(owner, "u1", d) || l.Ours(owner, child("", "")) {
		t.Error("Forget left a record behind")
	}
}

// Events arrive on informer goroutines while workers write: run with -race.
func TestLog_ConcurrentWritesAndEvents(t *testing.T) {
	l := &Log{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		key := types.NamespacedName{Namespace: "team", Name: string(rune('a' + i))}
		go func() {
			defer wg.Done()
			for range 200 {
				_, _ = l.Write(key, "h", "", func() (string, error) { return "1", nil })
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				l.Ours(key, child("h", "1"))
			}
		}()
	}
	wg.Wait()
}

// TestLog_CurrentWhileTheCacheStillShowsTheVersionOurWriteReplaced: right
// after an apply, the cache may still hold the ConfigMap our write
// replaced. Writing the same hash again would change nothing, so it is
// current; any other version (someone wrote after us), another hash, or a
// child we created (no replaced version) is not taken on trust.
func TestLog_CurrentWhileTheCacheStillShowsTheVersionOurWriteReplaced(t *testing.T) {
	l := &Log{}
	if _, err := l.Write(owner, "h2", "7", func() (string, error) { return "8", nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hash  string
		child *metav1.ObjectMeta
		want  bool
	}{
		{"the cache has our write", "h2", child("h2", "8"), true},
		{"the cache still has the version we replaced", "h2", child("h1", "7"), true},
		{"a newer context than our write", "h3", child("h1", "7"), false},
		{"someone wrote after us", "h2", child("h2", "9"), false},
		{"our version with another hash (cannot happen; not trusted)", "h3", child("h2", "8"), false},
	} {
		if got := l.Current(owner, tc.hash, tc.child); got != tc.want {
			t.Errorf("%s: Current = %v, want %v", tc.name, got, tc.want)
		}
	}
	created := types.NamespacedName{Namespace: "team", Name: "new"}
	if _, err := l.Write(created, "h1", "", func() (string, error) { return "3", nil }); err != nil {
		t.Fatal(err)
	}
	if l.Current(created, "h1", child("", "")) {
		t.Error("a child we created: an empty cached version was taken for the one we replaced")
	}
}
