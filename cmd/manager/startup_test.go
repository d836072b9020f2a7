package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/caroots"
)

// rootsAtStart is whether the compiled-in CA roots were installed by the
// time every package initialiser had run (read in TestMain, before any test).
var rootsAtStart bool

func TestMain(m *testing.M) {
	rootsAtStart = caroots.Installed()
	os.Exit(m.Run())
}

// The manager talks TLS at start only to the API server, with the CA of its
// kubeconfig or service account; Services, webhooks and MCP servers go through
// internal/outbound, whose transport installs the roots on the first https
// request. Parsing them at start held 0.4 MB of heap in every manager
// process, shards included (docs/benchmarks.md, Shards).
func TestManager_InstallsNoCARootsAtStart(t *testing.T) {
	if rootsAtStart {
		t.Fatal("the manager installed the compiled-in CA roots at start; they belong to the first https request (caroots.Transport)")
	}
}

// Packages whose initialisers every manager process pays for at start, and
// which the manager does without: k8s.io/apiserver came with
// controller-runtime's metrics filter (its delegating authenticator and
// authorizer), with component-base's metrics registry, feature gates and
// Kubernetes' CEL libraries (about 0.35 MB of heap); internal/metricsauth
// asks the API server the same two questions. The eager CA roots package
// parses every compiled-in root at init.
func TestManager_LinksNoAPIServerLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/apiserver/") || strings.HasPrefix(pkg, "k8s.io/component-base/metrics") ||
			pkg == "sigs.k8s.io/controller-runtime/pkg/metrics/filters" || pkg == "golang.org/x/crypto/x509roots/fallback" {
			t.Errorf("the manager links %s", pkg)
		}
	}
}
