package crdvalidation

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// The envtest API server, started once for the package.
var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunSuite(m, testenv.SuiteOptions{}, func(s *testenv.Suite) (func() error, error) {
		testEnv, cfg, k8sClient = s.Env, s.Config, s.Client
		return nil, nil
	}))
}
