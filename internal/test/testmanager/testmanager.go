package testmanager

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/apiconn"
	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// StopTimeout bounds how long Stop waits for the manager to return.
const StopTimeout = 60 * time.Second

// Options are what a harness sets on top of the production wiring. The zero
// value runs the controllers with controllers.Options{}.
type Options struct {
	// Controllers configure the controllers, as cmd/manager's flags do.
	Controllers controllers.Options
	// WrapAPIReader, if set, wraps the manager's uncached reader and the
	// controllers read through the result (fault injection). It takes
	// precedence over Controllers.APIReader.
	WrapAPIReader func(client.Reader) client.Reader
	// RESTConfig, if set, adjusts the manager's own copy of the rest config
	// before anything is built from it: a write counter's transport, a
	// client rate limit.
	RESTConfig func(*rest.Config)
	// Configure, if set, adjusts the manager's options before the manager
	// is built (leader election, a shard's cache and client). It gets the
	// adjusted rest config and a context that ends when the manager stops.
	Configure func(ctx context.Context, cfg *rest.Config, opts *ctrl.Options) error
	// Runnables are added to the manager before it starts.
	Runnables []manager.Runnable
}

// Manager is one running in-process manager.
type Manager struct {
	// Client is the manager's client: reads come from its cache.
	Client client.Client
	// Reconciler is the Workspace reconciler controllers.Setup returned.
	Reconciler *controllers.WorkspaceReconciler

	cancel context.CancelFunc
	done   chan struct{}
	err    error // the manager's return, set before done closes
}

// Start builds a manager against a copy of cfg with the production wiring
// (kubescheme.NewManager(), apiconn, controllers.Setup), adjusted by o, and starts it. It
// runs until ctx ends or Stop is called. The metrics server is off, and so
// is the controller name check, so that a process can run a second manager
// (restart tests, go test -count=N).
func Start(ctx context.Context, cfg *rest.Config, o Options) (*Manager, error) {
	mgrCfg := rest.CopyConfig(cfg)
	apiconn.Configure(mgrCfg, apiconn.Options{})
	if o.RESTConfig != nil {
		o.RESTConfig(mgrCfg)
	}
	opts := ctrl.Options{
		Scheme:         kubescheme.NewManager(),
		MapperProvider: apiconn.NewMapper,
		Cache:          cache.Options{DefaultTransform: controllers.StripManagedFields},
		Metrics:        metricsserver.Options{BindAddress: "0"},
		Controller:     config.Controller{SkipNameValidation: ptr.To(true)},
	}
	ctx, cancel := context.WithCancel(ctx)
	m, err := build(ctx, mgrCfg, opts, o)
	if err != nil {
		cancel()
		return nil, err
	}
	m.cancel = cancel
	return m, nil
}

// build wires the manager and starts it; Start ends ctx if it fails.
func build(ctx context.Context, cfg *rest.Config, opts ctrl.Options, o Options) (*Manager, error) {
	if o.Configure != nil {
		if err := o.Configure(ctx, cfg, &opts); err != nil {
			return nil, fmt.Errorf("configuring the manager: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	copts := o.Controllers
	if o.WrapAPIReader != nil {
		copts.APIReader = o.WrapAPIReader(mgr.GetAPIReader())
	}
	r, err := controllers.Setup(ctx, mgr, copts)
	if err != nil {
		return nil, err
	}
	for _, run := range o.Runnables {
		if err := mgr.Add(run); err != nil {
			return nil, err
		}
	}
	m := &Manager{Client: mgr.GetClient(), Reconciler: r, done: make(chan struct{})}
	go func() {
		m.err = mgr.Start(ctx)
		close(m.done)
	}()
	return m, nil
}

// Done is closed once the manager has returned; Err then says why.
func (m *Manager) Done() <-chan struct{} { return m.done }

// Err is the manager's return once Done is closed, nil before.
func (m *Manager) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// Stop ends the manager's context and waits for it to return, at most
// StopTimeout; it returns the manager's error. Stopping twice is safe.
func (m *Manager) Stop() error {
	m.cancel()
	select {
	case <-m.done:
		return m.err
	case <-time.After(StopTimeout):
		return fmt.Errorf("manager did not stop within %s", StopTimeout)
	}
}
