package shards

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/apiconn"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testmanager"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// PlatformNS is the platform namespace of every manager here.
const PlatformNS = "loadout-system"

// Options start one manager process of a shard.
type Options struct {
	Plan  *shard.Plan // nil: an unsharded manager
	Shard string
	Mode  shard.Mode
	// LeaseDuration and RenewDeadline of the shard's Lease; short in tests.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	QPS                                       float32
	Burst                                     int
	Concurrency                               int
}

// Manager is one in-process manager with its own write counter.
type Manager struct {
	*testmanager.Manager // its Client is the manager's (cached, guarded) client
	Owner                *shard.Ownership
	Writes               *testenv.WriteCounter
	Watcher              *shard.Watcher
	Lock                 *PausableLock
}

// Start starts a manager with the production wiring (controllers.Setup,
// shard.Ownership.Configure) against cfg.
func Start(cfg *rest.Config, o Options) (*Manager, error) {
	m := &Manager{Writes: &testenv.WriteCounter{}}
	policy := workspace.Policy{PlatformNamespaces: []string{PlatformNS}, DefaultTrust: vocab.TrustRestricted}
	if o.Plan != nil {
		var err error
		if m.Owner, err = shard.NewOwnership(o.Plan, o.Shard, policy.PlatformNamespaces); err != nil {
			return nil, err
		}
		if m.Watcher, err = m.Owner.NewWatcher(cfg, PlatformNS); err != nil {
			return nil, err
		}
		m.Watcher.Interval = 500 * time.Millisecond
	}
	tm := testmanager.Options{
		Controllers: controllers.Options{
			Policy:                  policy,
			Shard:                   m.Owner,
			ReconcileTimeout:        time.Minute,
			MaxConcurrentReconciles: max(o.Concurrency, 4),
		},
		RESTConfig: func(mcfg *rest.Config) {
			limit := apiconn.Options{QPS: 1000, Burst: 2000}
			if o.QPS > 0 {
				limit = apiconn.Options{QPS: o.QPS, Burst: o.Burst}
			}
			apiconn.Configure(mcfg, limit) // as cmd/manager
			mcfg.Wrap(m.Writes.Wrap)
		},
	}
	if m.Owner != nil {
		tm.Configure = func(ctx context.Context, mcfg *rest.Config, opts *ctrl.Options) error {
			opts.LeaderElection = true
			opts.LeaseDuration = ptr.To(def(o.LeaseDuration, shard.DefaultLeaseDuration))
			opts.RenewDeadline = ptr.To(def(o.RenewDeadline, shard.DefaultRenewDeadline))
			opts.RetryPeriod = ptr.To(def(o.RetryPeriod, 2*time.Second))
			opts.LeaderElectionReleaseOnCancel = true
			if err := m.Owner.Configure(ctx, mcfg, opts, PlatformNS, o.Mode); err != nil {
				return err
			}
			m.Lock = &PausableLock{Interface: opts.LeaderElectionResourceLockInterface}
			opts.LeaderElectionResourceLockInterface = m.Lock
			return nil
		}
		tm.Runnables = []manager.Runnable{m.Watcher}
	}
	var err error
	if m.Manager, err = testmanager.Start(context.Background(), cfg, tm); err != nil {
		return nil, err
	}
	return m, nil
}

func def(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}

// PausableLock stands for a process that stops running: while paused, every
// call to the Lease blocks, as in a process stopped by SIGSTOP or a long GC
// or node freeze, and the renewals stop.
type PausableLock struct {
	resourcelock.Interface
	mu     sync.Mutex
	paused chan struct{}
}

// Pause blocks the Lease calls until Resume.
func (p *PausableLock) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

// Resume lets the Lease calls run again.
func (p *PausableLock) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}

func (p *PausableLock) wait(ctx context.Context) error {
	p.mu.Lock()
	ch := p.paused
	p.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get waits while paused.
func (p *PausableLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if err := p.wait(ctx); err != nil {
		return nil, nil, err
	}
	return p.Interface.Get(ctx)
}

// Create waits while paused.
func (p *PausableLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := p.wait(ctx); err != nil {
		return err
	}
	return p.Interface.Create(ctx, ler)
}

// Update waits while paused.
func (p *PausableLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := p.wait(ctx); err != nil {
		return err
	}
	return p.Interface.Update(ctx, ler)
}
