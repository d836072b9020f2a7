package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The sidecar binary exists to be small: it must not link the Kubernetes
// client, the controller runtime or the controller's packages, whatever a
// change to the agent-side packages imports.
func TestSidecarLinksNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"k8s.io/client-go",
		"sigs.k8s.io/controller-runtime",
		"k8s.io/api/",
		"github.com/loadout-dev/loadout/internal/workspace",
		"github.com/loadout-dev/loadout/controllers",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("loadout-hostd links %s", pkg)
			}
		}
	}
}

// It is `loadout hostd`: the same command, with the hooks and version.
func TestSidecarIsHostd(t *testing.T) {
	out, err := exec.Command("go", "run", ".", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("loadout-hostd --help: %v\n%s", err, out)
	}
	for _, want := range []string{"hostd is the agent-side extension host", "--context-dir", "--context-keys", "hook", "version"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("loadout-hostd --help does not mention %q:\n%s", want, out)
		}
	}
}
