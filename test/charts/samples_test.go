package charts

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// `kubectl apply -k config/samples` applies only what the kustomization
// lists: a sample file added to the directory but not to the list would be
// silently left out (and `loadout preview -f config/samples` would still
// read it, so the docs and the cluster would disagree).
func TestSamples_KustomizationListsEveryManifest(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "config", "samples")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("config/samples/kustomization.yaml: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(k.Resources, name) {
			t.Errorf("config/samples/%s is not in config/samples/kustomization.yaml's resources", name)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("config/samples/kustomization.yaml lists %s: %v", r, err)
		}
	}
}
