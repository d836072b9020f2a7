package main

import (
	"os"
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
