package main

import (
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzReadManifests: `loadout preview -f` reads whatever YAML it is given.
// Reading never panics, and every object it keeps has a name, and a
// namespace unless it is a Namespace.
func FuzzReadManifests(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: loadout.dev/v1alpha1\nkind: Skill\nmetadata: {name: review}\nspec: {description: d, body: b}\n",
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {loadout.dev/trust: trusted}\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: rules}\ndata: {AGENTS.md: x}\n",
		"apiVersion: loadout.dev/v1alpha1\nkind: Workspace\nmetadata: {name: dev}\nspec: {roots: [{name: p}], unknown: 1}\n",
		"kind: Skill\napiVersion: loadout.dev/v1alpha1\nmetadata: {name: ''}\n",
		"a: &a [*a, *a]\n",
		"{\"apiVersion\":\"loadout.dev/v1alpha1\",\"kind\":\"Extension\",\"metadata\":{\"name\":\"e\"},\"spec\":{\"hooks\":[{\"name\":\"h\",\"event\":\"BeforeToolCall\",\"cel\":{\"expression\":\"true\"}}]}}",
		"---\n---\n\t- :\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		set := &objectSet{namespaces: map[string]corev1.Namespace{}, configMaps: map[string]corev1.ConfigMap{}}
		if err := set.readDocuments(strings.NewReader(doc), "fuzz.yaml", "default", io.Discard); err != nil {
			return
		}
		for name, n := range set.namespaces {
			if name == "" || n.Name != name {
				t.Fatalf("namespace kept as %q: %+v", name, n.ObjectMeta)
			}
		}
		check := func(kind, ns, name string) {
			if ns == "" || name == "" {
				t.Fatalf("%s kept without namespace or name: %q/%q", kind, ns, name)
			}
		}
		for _, o := range set.configMaps {
			check("ConfigMap", o.Namespace, o.Name)
		}
		for _, o := range set.skills {
			check("Skill", o.Namespace, o.Name)
		}
		for _, o := range set.templates {
			check("Template", o.Namespace, o.Name)
		}
		for _, o := range set.extensions {
			check("Extension", o.Namespace, o.Name)
		}
		for _, o := range set.workspaces {
			check("Workspace", o.Namespace, o.Name)
		}
	})
}
