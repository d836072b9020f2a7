package ownwrites

import (
	"crypto/sha256"
	"slices"
	"sync"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Log is the memory of our own writes, per owner (a Workspace's key): of
// the child object it publishes (its content hash in the
// loadout.dev/context-hash annotation), the resourceVersion our last write returned
// and the write in flight; of its status, a digest of the last one we
// patched. The zero value is ready to use; it is safe for concurrent use.
//
// Why not level-based detection alone: the published ConfigMap is cached as
// metadata only, so the only content signal in an event is the hash
// annotation, and a hand edit that keeps the annotation changes the data
// without changing it. The resourceVersion our write returned is the one
// thing that tells our own write from a later one by anyone else, and the
// watch event of our write can arrive before the write returns (hence the
// in-flight record).
type Log struct {
	applied sync.Map // types.NamespacedName → appliedRecord
	writing sync.Map // types.NamespacedName → *inFlight
	status  sync.Map // types.NamespacedName → statusRecord
}

// inFlight is a write in progress and the resourceVersions of the events
// taken for it.
type inFlight struct {
	hash string
	mu   sync.Mutex
	seen []string
}

// appliedRecord is our last successful write of an owner's child: the
// resourceVersion it returned, the hash it published, and the
// resourceVersion of the child it replaced ("" for a create).
type appliedRecord struct {
	rv, hash, replaced string
}

type statusRecord struct {
	uid    types.UID
	digest [sha256.Size]byte
}

// Current reports whether writing hash again would change nothing: child,
// as last seen, is exactly what our last write of hash left, or it is still
// the version that write replaced (the cache has not caught up with our
// write yet; a write by anyone else after ours shows another version). A
// child we created has no replaced version to recognise.
func (l *Log) Current(owner types.NamespacedName, hash string, child metav1.Object) bool {
	v, ok := l.applied.Load(owner)
	if !ok {
		return false
	}
	last := v.(appliedRecord)
	switch rv := child.GetResourceVersion(); {
	case rv == last.rv:
		return child.GetAnnotations()[vocab.ContextHashAnnotation] == hash
	case rv == last.replaced && last.replaced != "":
		return last.hash == hash
	}
	return false
}

// Write runs one write of owner's child that publishes hash, and records
// what it left behind. While it is in flight, events carrying hash are taken
// for its own (see Ours); overlapped reports that one of them had another
// resourceVersion than the write returned, so someone else wrote too and
// the caller should look again.
func (l *Log) Write(owner types.NamespacedName, hash, replaced string, do func() (resourceVersion string, err error)) (overlapped bool, err error) {
	w := &inFlight{hash: hash}
	l.writing.Store(owner, w)
	rv, err := do()
	l.writing.Delete(owner)
	if err != nil {
		return false, err
	}
	l.applied.Store(owner, appliedRecord{rv: rv, hash: hash, replaced: replaced})
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.seen, func(s string) bool { return s != rv }), nil
}

// Adopt records child as if our last write had left it: a new process (a
// restart, or a shard's new leader) takes over a child that already
// publishes hash, rather than writing the same content again. The caller
// has checked that nobody else wrote it (see the controller's adoption).
func (l *Log) Adopt(owner types.NamespacedName, hash string, child metav1.Object) {
	l.applied.Store(owner, appliedRecord{rv: child.GetResourceVersion(), hash: hash})
}

// Ours reports whether an event of child, owner's published object, shows
// our own write: the resourceVersion our last write returned, or, while a
// write is in flight, the hash it writes. An event taken for ours during a
// write is remembered, so Write can tell if it was not ours after all.
func (l *Log) Ours(owner types.NamespacedName, child metav1.Object) bool {
	if last, ok := l.applied.Load(owner); ok && last.(appliedRecord).rv == child.GetResourceVersion() {
		return true
	}
	v, ok := l.writing.Load(owner)
	if !ok {
		return false
	}
	w := v.(*inFlight)
	if child.GetAnnotations()[vocab.ContextHashAnnotation] != w.hash {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, child.GetResourceVersion())
	return true
}

// StatusWritten reports whether the last status we patched for owner was
// this one (same object UID, same digest). A reconcile that starts from a
// cache not yet showing our patch would otherwise patch it a second time.
// The UID matters: an owner deleted and re-created under the same name
// computes the same status as the old one, and its empty status must still
// be written.
func (l *Log) StatusWritten(owner types.NamespacedName, uid types.UID, digest [sha256.Size]byte) bool {
	last, ok := l.status.Load(owner)
	return ok && last.(statusRecord) == statusRecord{uid: uid, digest: digest}
}

// RecordStatus remembers a status patch that succeeded. A digest, not a copy:
// at thousands of Workspaces full copies were a quarter of the heap
// (docs/benchmarks.md, Memory).
func (l *Log) RecordStatus(owner types.NamespacedName, uid types.UID, digest [sha256.Size]byte) {
	l.status.Store(owner, statusRecord{uid: uid, digest: digest})
}

// Forget drops everything remembered about owner (it was deleted).
func (l *Log) Forget(owner types.NamespacedName) {
	l.applied.Delete(owner)
	l.writing.Delete(owner)
	l.status.Delete(owner)
}
