package controllers

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Platform namespaces of the test manager. Tests that put extensions into a
// platform namespace use their own and give their Workspaces explicit roots,
// so that tests running side by side do not see each other's extensions.
const (
	platformNS      = "loadout-system"
	platformExtNS   = "platform-ext"
	platformOtherNS = "platform-other"
)

var (
	k8sClient client.Client // direct, uncached: what a user sees
	writes    = &testenv.WriteCounter{}
	// namespaceReads records how the manager lists and watches Namespaces.
	namespaceReads = &acceptRecorder{path: "/api/v1/namespaces"}
	kit            *testenv.Kit
	// services maps "namespace/name" to the URL a test server listens on; the
	// manager's webhook resolver reads it, so the controller can reach
	// service-backed extensions served by httptest.
	services sync.Map
	// reconciler is the Workspace reconciler under test, for its map functions.
	reconciler *WorkspaceReconciler
	// adminConfig is the envtest admin's rest.Config.
	adminConfig *rest.Config
)

// tableConfig is a rest.Config for raw requests such as server-side Tables.
func tableConfig() *rest.Config {
	c := rest.CopyConfig(adminConfig)
	c.GroupVersion = &metav1.SchemeGroupVersion
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return c
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return testenv.RunSuite(m, testenv.SuiteOptions{Timeout: 30 * time.Second, NamespacePrefix: "ws-",
		TrustedNamespaces: []string{platformNS, platformExtNS, platformOtherNS}, LogErrors: true},
		func(s *testenv.Suite) (func() error, error) {
			adminConfig, k8sClient, kit = s.Config, s.Client, s.Kit
			return startManager(ctx, cancel)
		})
}

// startManager starts the controllers under test until ctx ends; the
// returned stop ends it and reports what the manager returned.
func startManager(ctx context.Context, cancel context.CancelFunc) (func() error, error) {
	mgrCfg := rest.CopyConfig(adminConfig)
	mgrCfg.Wrap(writes.Wrap)
	mgrCfg.Wrap(namespaceReads.wrap)
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{Scheme: k8sClient.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultTransform: StripManagedFields}})
	if err != nil {
		return nil, err
	}
	if reconciler, err = Setup(ctx, mgr, Options{
		Policy: workspace.Policy{
			PlatformNamespaces: []string{platformNS, platformExtNS, platformOtherNS},
			DefaultTrust:       vocab.TrustRestricted,
		},
		Loader:                  workspace.HostLoader{Outbound: outbound.New(outbound.Options{Timeout: 5 * time.Second}), Resolve: testResolver},
		ReconcileTimeout:        30 * time.Second,
		MaxConcurrentReconciles: 4,
	}); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// testResolver sends a Service reference to the test server registered for
// it, and anything else to an address where nothing listens.
func testResolver(namespace string, ref v1alpha1.ServiceReference) (string, error) {
	if u, ok := services.Load(namespace + "/" + ref.Name); ok {
		return u.(string) + ref.Path, nil
	}
	return "http://127.0.0.1:1" + ref.Path, nil
}
