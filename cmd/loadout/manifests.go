package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// objectSet is everything read from manifests, the way the controller would
// find it in the cluster.
type objectSet struct {
	namespaces map[string]corev1.Namespace
	configMaps map[string]corev1.ConfigMap // by namespace/name
	skills     []v1alpha1.Skill
	templates  []v1alpha1.Template
	extensions []v1alpha1.Extension
	workspaces []v1alpha1.Workspace
}

// manifestExtensions are the file names read from a directory given to -f.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// readManifests reads every file given, and every manifest file directly in a
// directory given (like kubectl apply -f without -R). Objects without a
// namespace get defaultNamespace. Unknown kinds are reported on warn and left
// out; a malformed document is an error naming the file, the document and the
// field.
func readManifests(paths []string, defaultNamespace string, warn io.Writer) (*objectSet, error) {
	set := &objectSet{namespaces: map[string]corev1.Namespace{}, configMaps: map[string]corev1.ConfigMap{}}
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := set.readFile(f, defaultNamespace, warn); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

func manifestFiles(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		// kustomization.yaml configures kustomize (config/samples has one);
		// it is no object.
		if !e.IsDir() && e.Name() != "kustomization.yaml" && slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(e.Name()))) {
			files = append(files, filepath.Join(p, e.Name()))
		}
	}
	return files, nil
}

func (s *objectSet) readFile(file, defaultNamespace string, warn io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.readDocuments(f, file, defaultNamespace, warn)
}

// readDocuments reads a stream of YAML documents; name labels errors.
func (s *objectSet) readDocuments(in io.Reader, file, defaultNamespace string, warn io.Writer) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if err := s.add(doc, defaultNamespace, warn); err != nil {
			return fmt.Errorf("%s: document %d: %w", file, i, err)
		}
	}
}

// add decodes one document strictly: an unknown field is an error, as the API
// server would prune or reject it.
func (s *objectSet) add(doc []byte, defaultNamespace string, warn io.Writer) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	if tm.Kind == "" && tm.APIVersion == "" {
		return nil // a document of comments only
	}
	decode := func(obj metav1.Object) error {
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return fmt.Errorf("%s %q: %w", tm.Kind, obj.GetName(), err)
		}
		if obj.GetName() == "" {
			return fmt.Errorf("%s: metadata.name is required", tm.Kind)
		}
		if obj.GetNamespace() == "" && tm.Kind != "Namespace" {
			obj.SetNamespace(defaultNamespace)
		}
		return nil
	}
	loadout := tm.APIVersion == v1alpha1.GroupVersion.String()
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "Namespace":
		return decodeAs(decode, func(o corev1.Namespace) { s.namespaces[o.Name] = o })
	case tm.APIVersion == "v1" && tm.Kind == "ConfigMap":
		return decodeAs(decode, func(o corev1.ConfigMap) { s.configMaps[o.Namespace+"/"+o.Name] = o })
	case loadout && tm.Kind == "Skill":
		return decodeAs(decode, func(o v1alpha1.Skill) { s.skills = append(s.skills, o) })
	case loadout && tm.Kind == "Template":
		return decodeAs(decode, func(o v1alpha1.Template) { s.templates = append(s.templates, o) })
	case loadout && tm.Kind == "Extension":
		return decodeAs(decode, func(o v1alpha1.Extension) { s.extensions = append(s.extensions, o) })
	case loadout && tm.Kind == "Workspace":
		return decodeAs(decode, func(o v1alpha1.Workspace) { s.workspaces = append(s.workspaces, o) })
	default:
		fmt.Fprintf(warn, "skipped %s %s: not read by preview\n", tm.APIVersion, tm.Kind)
	}
	return nil
}

// decodeAs decodes the document into a new T and, when it is valid, hands
// it to keep.
func decodeAs[T any, P interface {
	*T
	metav1.Object
}](decode func(metav1.Object) error, keep func(T)) error {
	var o T
	if err := decode(P(&o)); err != nil {
		return err
	}
	keep(o)
	return nil
}
