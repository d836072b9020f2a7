// Package manifests reads Kubernetes manifests from a directory (kubectl
// apply -f semantics: YAML documents and JSON, including Lists) and applies
// them server-side in dependency order. `make demo`, the e2e and chart tests
// share it.
package manifests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// FieldManager owns what the demo applies, as kubectl's would.
const FieldManager = "loadout-demo"

// Manifest is one object read from a file.
type Manifest struct {
	File   string
	Object *unstructured.Unstructured
}

// String names the object and its file, for messages.
func (m Manifest) String() string {
	name := m.Object.GetName()
	if ns := m.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", m.Object.GetKind(), name, m.File)
}

// Read decodes every YAML document of the files a directory's
// kustomization.yaml lists as resources (what `kubectl apply -k DIR`
// applies), or, without one, of every *.yaml file directly in dir in name
// order (like kubectl apply -f DIR).
func Read(dir string) ([]Manifest, error) {
	files, err := manifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, f := range files {
		objs, err := DecodeFile(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			out = append(out, Manifest{File: f, Object: o})
		}
	}
	return out, nil
}

// manifestFiles lists the files ReadManifests reads.
func manifestFiles(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no *.yaml files", dir)
		}
		sort.Strings(files)
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	var files []string
	for _, r := range k.Resources {
		if filepath.Ext(r) != ".yaml" {
			return nil, fmt.Errorf("%s/kustomization.yaml: resource %q is not a file of the directory; use kustomize build", dir, r)
		}
		files = append(files, filepath.Join(dir, r))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s/kustomization.yaml lists no resources", dir)
	}
	return files, nil
}

// DecodeFile is Decode of the file at path; its errors name the file.
func DecodeFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

// Decode decodes a stream of YAML (or JSON) documents, skipping empty
// ones.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("document %d: kind and metadata.name are required", i)
		}
		out = append(out, u)
	}
}

// applyOrder is the rank of a kind when applying: what others depend on first.
func applyOrder(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	case "ServiceAccount", "ClusterRole", "Role":
		return 2
	case "ClusterRoleBinding", "RoleBinding":
		return 3
	default:
		return 4
	}
}

// Apply server-side applies every object with FieldManager, Namespaces and
// CRDs first. An error names the object and the file it came from.
func Apply(ctx context.Context, c client.Client, manifests []Manifest, opts ...client.ApplyOption) error {
	sorted := append([]Manifest(nil), manifests...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return applyOrder(sorted[i].Object.GetKind()) < applyOrder(sorted[j].Object.GetKind())
	})
	opts = append([]client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}, opts...)
	for _, m := range sorted {
		obj := m.Object.DeepCopy()
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
			return fmt.Errorf("applying %s: %w", m, err)
		}
	}
	return nil
}

// Kinds lists the distinct kinds of manifests, for messages.
func Kinds(manifests []Manifest) string {
	seen := map[string]bool{}
	var out []string
	for _, m := range manifests {
		if k := m.Object.GetKind(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// Namespace is a Namespace the demo creates before objects that live
// in it (config/rbac's ServiceAccount and Role).
func Namespace(name string) Manifest {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	return Manifest{File: "(demo)", Object: ns}
}
