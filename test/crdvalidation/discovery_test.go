package crdvalidation

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func TestCRDs_ServeShortNamesAndLoadoutCategory(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion("loadout.dev/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"skills": "sk", "templates": "tpl", "extensions": "ext", "workspaces": "ws"}
	for _, r := range list.APIResources {
		short, ok := want[r.Name]
		if !ok {
			continue
		}
		delete(want, r.Name)
		if !slices.Contains(r.ShortNames, short) {
			t.Errorf("%s: short names %v, want %q", r.Name, r.ShortNames, short)
		}
		if !slices.Contains(r.Categories, "loadout") {
			t.Errorf("%s: categories %v, want loadout", r.Name, r.Categories)
		}
		if !r.Namespaced {
			t.Errorf("%s is cluster-scoped, want namespaced", r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("resources not served: %v", want)
	}
}

// TestKubectl_GetLoadoutListsEveryKind runs the real kubectl when the machine
// has it, as a user would after installing the CRDs.
func TestKubectl_GetLoadoutListsEveryKind(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	user, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := testenv.WriteKubeconfig(t, user)
	out, err := exec.Command(kubectl, "--kubeconfig", path, "api-resources", "--categories=loadout", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl api-resources: %v\n%s", err, out)
	}
	for _, kind := range []string{"skills.loadout.dev", "templates.loadout.dev", "extensions.loadout.dev", "workspaces.loadout.dev"} {
		if !strings.Contains(string(out), kind) {
			t.Errorf("kubectl api-resources --categories=loadout lacks %s:\n%s", kind, out)
		}
	}
	out, err = exec.Command(kubectl, "--kubeconfig", path, "get", "loadout", "-A").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get loadout -A: %v\n%s", err, out)
	}
}
