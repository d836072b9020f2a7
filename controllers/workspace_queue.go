package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TenantLabel names a namespace's tenant for the work queue's fairness:
// namespaces with the same value share one turn. Only trust admins may set
// it (the trust label policy covers it); without it, each namespace is its
// own tenant.
const TenantLabel = "loadout.dev/tenant"

// rankSpan is how many places within one priority the fair queue spreads a
// tenant's items over: the effective priority is priority×rankSpan − rank.
const rankSpan = 1 << 20

// capRetry is how soon an item whose tenant has all its workers busy is
// offered again.
const capRetry = 20 * time.Millisecond

// fairQueue keeps the priority queue's priorities but round-robins between
// tenants within a priority: an item is queued behind the items of its own
// tenant already waiting at its priority, not behind everyone's, so a
// tenant's change is next whatever another tenant has queued. A tenant
// also has at most maxInFlight items being reconciled at once, so one
// tenant's slow or hung reconciles (a trusted extension's Service that does
// not answer) leave workers for the others.
type fairQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	tenantOf    func(namespace string) string
	maxInFlight int

	mu       sync.Mutex
	queued   map[reconcile.Request]queuedItem
	ranks    map[tenantPriority]int
	inFlight map[string]int
	running  map[reconcile.Request]string
}

type queuedItem struct {
	tenant   string
	priority int // as added
	eff      int // as queued
}

type tenantPriority struct {
	tenant   string
	priority int
}

// newFairQueue returns the Workspace controller's NewQueue: a fair queue
// over controller-runtime's priority queue. Tenants are read from the cached
// Namespace labels through c.
func newFairQueue(c client.Reader, workers int) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return &fairQueue{
			PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl }),
			tenantOf:      cachedTenant(c),
			maxInFlight:   max(1, workers-1), // one worker always left for the other tenants
			queued:        map[reconcile.Request]queuedItem{},
			ranks:         map[tenantPriority]int{},
			inFlight:      map[string]int{},
			running:       map[reconcile.Request]string{},
		}
	}
}

// cachedTenant reads a namespace's tenant label from the cache.
func cachedTenant(c client.Reader) func(string) string {
	return func(namespace string) string {
		ns := namespaceMetadata()
		if err := c.Get(context.Background(), types.NamespacedName{Name: namespace}, ns); err == nil {
			if t := ns.Labels[TenantLabel]; t != "" {
				return "label:" + t
			}
		}
		return "ns:" + namespace
	}
}

func (q *fairQueue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

func (q *fairQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: d}, item)
}

func (q *fairQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts queues each item at its priority, behind its own tenant's
// items already waiting there.
func (q *fairQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	p := ptr.Deref(o.Priority, 0)
	for _, item := range items {
		eff := q.place(item, p)
		o.Priority = &eff
		q.PriorityQueue.AddWithOpts(o, item)
	}
}

// place records item at priority p and returns its effective priority.
func (q *fairQueue) place(item reconcile.Request, p int) int {
	tenant := q.tenantOf(item.Namespace)
	q.mu.Lock()
	defer q.mu.Unlock()
	if old, ok := q.queued[item]; ok {
		if old.priority >= p {
			// Already waiting at this priority or above: keep its place
			// (the queue keeps the higher priority).
			return old.eff
		}
		q.ranks[tenantPriority{old.tenant, old.priority}]--
	}
	key := tenantPriority{tenant, p}
	rank := min(q.ranks[key], rankSpan-1)
	q.ranks[key]++
	eff := p*rankSpan - rank
	q.queued[item] = queuedItem{tenant: tenant, priority: p, eff: eff}
	return eff
}

func (q *fairQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority hands out the next item whose tenant has a worker free,
// with the priority it was added at.
func (q *fairQueue) GetWithPriority() (reconcile.Request, int, bool) {
	for {
		item, eff, shutdown := q.PriorityQueue.GetWithPriority()
		if shutdown {
			return item, eff, true
		}
		q.mu.Lock()
		it, ok := q.queued[item]
		if ok {
			delete(q.queued, item)
			key := tenantPriority{it.tenant, it.priority}
			if q.ranks[key]--; q.ranks[key] <= 0 {
				delete(q.ranks, key)
			}
		} else {
			it = queuedItem{tenant: q.tenantOfLocked(item), priority: eff / rankSpan}
		}
		if q.inFlight[it.tenant] >= q.maxInFlight {
			q.mu.Unlock()
			q.PriorityQueue.Done(item)
			q.AddWithOpts(priorityqueue.AddOpts{After: capRetry, Priority: ptr.To(it.priority)}, item)
			continue
		}
		q.inFlight[it.tenant]++
		q.running[item] = it.tenant
		q.mu.Unlock()
		return item, it.priority, false
	}
}

func (q *fairQueue) tenantOfLocked(item reconcile.Request) string {
	q.mu.Unlock()
	defer q.mu.Lock()
	return q.tenantOf(item.Namespace)
}

// Done frees the item's tenant's worker.
func (q *fairQueue) Done(item reconcile.Request) {
	q.mu.Lock()
	if t, ok := q.running[item]; ok {
		delete(q.running, item)
		if q.inFlight[t]--; q.inFlight[t] <= 0 {
			delete(q.inFlight, t)
		}
	}
	q.mu.Unlock()
	q.PriorityQueue.Done(item)
}
