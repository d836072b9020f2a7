package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The sidecar binary exists to be small: it must not link the Kubernetes
// client, the controller runtime, the controller's packages or the API types
// (with them Kubernetes' API machinery, which alone costs the sidecar about
// 2 MiB of resident memory), whatever a change to the agent-side packages
// imports. Agent-side code names the API's vocabulary in api/v1alpha1/vocab.
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
	exact := map[string]bool{
		"github.com/loadout-dev/loadout/api/v1alpha1":               true,
		"github.com/loadout-dev/loadout/internal/exthost/extobject": true,
		"k8s.io/apimachinery/pkg/apis/meta/v1":                      true,
		"k8s.io/apimachinery/pkg/runtime":                           true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if exact[pkg] {
			t.Errorf("loadout-hostd links %s", pkg)
		}
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
