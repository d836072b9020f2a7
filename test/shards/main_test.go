package shards

import (
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

var (
	cfg *rest.Config
	kit *testenv.Kit
)

// TestMain starts one control plane with sharded list and watch on (the
// ShardedListAndWatch gate), so the managers here use the API server's
// shard selector; TestShards_ClientSideFilter runs a manager that does not.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	return testenv.RunSuite(m, testenv.SuiteOptions{Timeout: 60 * time.Second, NamespacePrefix: "shards-",
		TrustedNamespaces: []string{PlatformNS}, Environment: []func(*envtest.Environment){GateOn}},
		func(s *testenv.Suite) (func() error, error) {
			cfg, kit = s.Config, s.Kit
			return nil, nil
		})
}
