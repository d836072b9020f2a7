package crdvalidation

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
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
