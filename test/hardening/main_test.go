package hardening

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testmanager"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Platform namespaces of the test manager. Tests give their Workspaces
// explicit roots [own, platformNS], so that their extensions stay apart.
const (
	platformNS = "loadout-system"
	// unclaimedPlatformNS is listed as a platform namespace but not created:
	// the tenancy tests let a tenant create it.
	unclaimedPlatformNS = "loadout-platform-unclaimed"
	// reconcileTimeout is the manager's --reconcile-timeout here: short, so a
	// pass stuck on a stopped API server gives up and is retried quickly.
	reconcileTimeout = 10 * time.Second
)

var (
	env       *envtest.Environment
	cfg       *rest.Config
	scheme    = kubescheme.New()
	k8sClient client.Client // direct, uncached: what a user sees
	writes    = &testenv.WriteCounter{}
	kit       *testenv.Kit
	resolved  = &resolverLog{}
	faults    = &readFaults{}

	// mgrMu serialises tests that stop and start the manager.
	mgrMu   sync.Mutex
	current *testmanager.Manager
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// A fixed certificate directory lets the API server restart with the same
	// serving certificate (envtest regenerates it in a fresh directory
	// otherwise, and every client would stop trusting the server).
	certDir, err := os.MkdirTemp("", "loadout-hardening-apiserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(certDir) }()
	return testenv.RunSuite(m, testenv.SuiteOptions{
		// Waits are generous: the suite shares two cores with other work,
		// and nothing here asserts timings.
		Timeout: 60 * time.Second, NamespacePrefix: "hard-",
		TrustedNamespaces: []string{platformNS},
		Environment: []func(*envtest.Environment){func(e *envtest.Environment) {
			e.ControlPlane.GetAPIServer().CertDir = certDir
			// A graceful stop waits for open watches; past this it is killed,
			// which is a fault worth surviving too.
			e.ControlPlane.GetAPIServer().StopTimeout = 5 * time.Second
		}},
	}, func(s *testenv.Suite) (func() error, error) {
		env, cfg, k8sClient, kit = s.Env, s.Config, s.Client, s.Kit
		var err error
		current, err = startManager()
		// The tests may have replaced the manager by the time it stops.
		return func() error { return current.Stop() }, err
	})
}

// contextSigner signs what the test manager publishes, as the real manager
// does with the keys of its Secret; contextAnchor is its trust anchor.
var contextSigner, contextAnchor = func() (*contextsig.Signer, *contextsig.Verifier) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	utilruntime.Must(err)
	s, err := contextsig.NewSigner([]ed25519.PrivateKey{k})
	utilruntime.Must(err)
	v, err := contextsig.ParseTrustAnchor(s.TrustAnchor())
	utilruntime.Must(err)
	return s, v
}()

// managerPolicy is the test manager's trust configuration.
var managerPolicy = workspace.Policy{
	PlatformNamespaces: []string{platformNS, unclaimedPlatformNS},
	DefaultTrust:       vocab.TrustRestricted,
}

// startManager starts the production controllers with the test's
// resolver, read faults and write counter.
func startManager() (*testmanager.Manager, error) {
	return testmanager.Start(context.Background(), cfg, testmanager.Options{
		RESTConfig: func(c *rest.Config) { c.Wrap(writes.Wrap) },
		Controllers: controllers.Options{
			Policy:                  managerPolicy,
			Signer:                  contextSigner,
			Loader:                  workspace.HostLoader{Outbound: outbound.New(outbound.Options{Timeout: 2 * time.Second}), Resolve: resolved.resolve},
			ReconcileTimeout:        reconcileTimeout,
			MaxConcurrentReconciles: 4,
		},
		WrapAPIReader: func(r client.Reader) client.Reader { return faultyReader{Reader: r} },
	})
}

// resolverLog records every Service reference the controller resolves, with
// the namespace it resolves it in, and answers like extobject.DefaultResolver
// unless a test registered a server for the Service.
type resolverLog struct {
	mu       sync.Mutex
	calls    []resolution
	services sync.Map // "namespace/name" → base URL
}

type resolution struct {
	Namespace string
	Ref       v1alpha1.ServiceReference
	URL       string
}

func (l *resolverLog) resolve(namespace string, ref v1alpha1.ServiceReference) (string, error) {
	url, err := extobject.DefaultResolver(namespace, ref)
	if base, ok := l.services.Load(namespace + "/" + ref.Name); ok {
		url = base.(string) + ref.Path
	}
	l.mu.Lock()
	l.calls = append(l.calls, resolution{Namespace: namespace, Ref: ref, URL: url})
	l.mu.Unlock()
	return url, err
}

// in returns the resolutions of Services named like the test's.
func (l *resolverLog) named(name string) []resolution {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []resolution
	for _, c := range l.calls {
		if c.Ref.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// readFaults makes the manager's live reads (instructions ConfigMaps) fail a
// given number of times per namespace, as a flaky API server would.
type readFaults struct{ remaining sync.Map } // namespace → *int

type faultyReader struct{ client.Reader }

var errInjected = errors.New("injected transient read failure")

func (r faultyReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if faults.take(key.Namespace) {
		return fmt.Errorf("reading %s: %w", key, errInjected)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (f *readFaults) inject(namespace string, n int) {
	f.remaining.Store(namespace, &faultCount{n: n})
}

type faultCount struct {
	mu sync.Mutex
	n  int
}

func (f *readFaults) take(namespace string) bool {
	v, ok := f.remaining.Load(namespace)
	if !ok {
		return false
	}
	c := v.(*faultCount)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		return false
	}
	c.n--
	return true
}
