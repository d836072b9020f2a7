package controllers

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func testFairQueue(maxInFlight int) *fairQueue {
	q := newFairQueue(nil, maxInFlight+1)("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()).(*fairQueue)
	q.tenantOf = func(ns string) string { return ns }
	return q
}

func req(ns string, i int) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("ws-%d", i)}}
}

func TestFairQueue_ASmallTenantIsNextWhateverTheWhaleQueued(t *testing.T) {
	q := testFairQueue(100)
	defer q.ShutDown()
	for i := range 1000 {
		q.Add(req("whale", i))
	}
	q.Add(req("small", 0))
	var order []string
	for range 3 {
		item, _ := q.Get()
		order = append(order, item.Namespace)
		q.Done(item)
	}
	if order[0] != "small" && order[1] != "small" {
		t.Errorf("served %v: the small tenant waits behind the whale", order)
	}
}

func TestFairQueue_PrioritiesStillComeFirst(t *testing.T) {
	q := testFairQueue(100)
	defer q.ShutDown()
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(-100)}, req("a", 0))
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(0)}, req("b", 0))
	item, p, _ := q.GetWithPriority()
	if item.Namespace != "b" || p != 0 {
		t.Errorf("first %v at %d, want b at 0", item, p)
	}
	q.Done(item)
	item, p, _ = q.GetWithPriority()
	if item.Namespace != "a" || p != -100 {
		t.Errorf("then %v at %d, want a at -100 (the priority it was added at)", item, p)
	}
}

func TestFairQueue_ATenantHasAtMostItsShareOfWorkers(t *testing.T) {
	q := testFairQueue(1)
	defer q.ShutDown()
	q.Add(req("slow", 0))
	q.Add(req("slow", 1))
	q.Add(req("other", 0))
	first, _ := q.Get() // slow/ws-0 runs and hangs
	second, _ := q.Get()
	if first.Namespace != "slow" || second.Namespace != "other" {
		t.Errorf("got %v then %v: want the other tenant while slow's worker is busy", first, second)
	}
	q.Done(first)
	third, _ := q.Get()
	if third.Namespace != "slow" {
		t.Errorf("then %v", third)
	}
}
