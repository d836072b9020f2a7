package shard

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// selectedKinds are the namespaced kinds whose lists and watches carry the
// shard selector. Anything else (cluster-scoped kinds above all: the
// selector hashes metadata.namespace, empty for them) is listed whole.
var selectedKinds = map[string]bool{"Workspace": true, "Skill": true, "Template": true, "Extension": true, "ConfigMap": true}

// NewInformer is a cache.Options.NewInformer that keeps other shards'
// objects out of the cache. Lists and watches of the namespaced kinds carry
// the shard selector when the API server offers sharded list and watch
// (Probe); whether or not it does, every listed object and watch event is
// filtered client-side too, so a server that ignored the selector (a skewed
// or gate-less one) still leaves only this shard's view in the cache.
// Workspaces are kept in owned namespaces only; every other kind also in
// the platform namespaces; Namespaces by their own name.
func (o *Ownership) NewInformer(lw toolscache.ListerWatcher, exemplar runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	kind := kindOf(exemplar)
	f := &filtered{o: o, kind: kind, inner: toolscache.ToListerWatcherWithContext(lw)}
	switch {
	case kind == "Workspace":
		f.keep = func(ns, _ string) bool { return o.Owns(ns) }
		f.selector = o.Shard.Selector()
	case kind == "Namespace":
		f.keep = func(_, name string) bool { return o.InView(name) }
	case selectedKinds[kind]:
		f.keep = func(ns, _ string) bool { return o.InView(ns) }
		f.selector = o.Shard.Selector(o.Platform...)
	default:
		f.keep = func(ns, _ string) bool { return ns == "" || o.InView(ns) }
	}
	if !o.selectorKinds[kind] {
		f.selector = ""
	}
	return toolscache.NewSharedIndexInformer(f, exemplar, resync, indexers)
}

func kindOf(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// filtered is a ListerWatcher that asks for a shard and keeps only it.
type filtered struct {
	o        *Ownership
	kind     string
	selector string
	keep     func(namespace, name string) bool
	inner    toolscache.ListerWatcherWithContext
}

var _ toolscache.ListerWatcherWithContext = (*filtered)(nil)

func (f *filtered) List(opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), opts)
}

func (f *filtered) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), opts)
}

func (f *filtered) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.ShardSelector = f.selector
	list, err := f.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, item := range items {
		if f.keepObject(item) {
			kept = append(kept, item)
		}
	}
	if len(kept) != len(items) {
		shardDropped.WithLabelValues(f.kind).Add(float64(len(items) - len(kept)))
		if err := meta.SetList(list, kept); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func (f *filtered) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.ShardSelector = f.selector
	w, err := f.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		switch e.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if !f.keepObject(e.Object) {
				shardDropped.WithLabelValues(f.kind).Inc()
				return e, false
			}
		}
		return e, true
	}), nil
}

func (f *filtered) keepObject(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return true
	}
	return f.keep(m.GetNamespace(), m.GetName())
}
