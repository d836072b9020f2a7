package e2e

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// assets holds the envtest binaries built from Go modules (KUBEBUILDER_ASSETS,
// through testenv.Assets' wrappers, which die with the test process).
var assets string

// The API server shared by the install and policy tests, started on first
// use. It has no CRDs installed: the install test applies them itself.
var (
	sharedOnce sync.Once
	sharedEnv  *envtest.Environment
	sharedCfg  *rest.Config
	sharedErr  error
)

func TestMain(m *testing.M) {
	var err error
	if assets, err = testenv.Assets(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctrllog.SetLogger(crzap.New(crzap.WriteTo(io.Discard))) // envtest's progress lines; failures come back as errors
	code := m.Run()
	if sharedEnv != nil {
		if err := sharedEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// apiServer returns the shared API server's admin config and environment.
func apiServer(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	sharedOnce.Do(func() {
		sharedEnv = &envtest.Environment{BinaryAssetsDirectory: assets}
		sharedCfg, sharedErr = sharedEnv.Start()
		if sharedErr != nil {
			sharedEnv = nil
		}
	})
	if sharedErr != nil {
		t.Fatalf("starting envtest from %s: %v", assets, sharedErr)
	}
	return sharedEnv, sharedCfg
}

// newClient returns a client for cfg with the built-in types.
func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
