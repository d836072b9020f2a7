package crdvalidation

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// readManifests decodes every YAML document of every .yaml file in dir,
// skipping kustomization files.
func readManifests(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		docs, err := manifests.DecodeFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, docs...)
	}
	return objs
}

func TestSamples_ApplyCleanly(t *testing.T) {
	objs := readManifests(t, filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if len(objs) == 0 {
		t.Fatal("config/samples holds no manifests")
	}
	// Namespaces first, as kubectl apply -f would need them.
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace"
	})
	kinds := map[string]int{}
	for _, obj := range objs {
		// Server-side apply, as `kubectl apply --server-side` does: a re-run applies again.
		if err := k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("samples-test"), client.ForceOwnership); err != nil {
			t.Errorf("%s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		kinds[obj.GetKind()]++
	}
	for _, kind := range []string{"Namespace", "Skill", "Template", "Extension", "Workspace"} {
		if kinds[kind] == 0 {
			t.Errorf("config/samples has no %s", kind)
		}
	}
}
