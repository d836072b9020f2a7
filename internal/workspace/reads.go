package workspace

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// DefaultRootName and PlatformRootName name the default roots of a Workspace.
const (
	DefaultRootName  = "project"
	PlatformRootName = "platform"
)

// DefaultInstructionsKey is the key of an instructions ConfigMap that a
// reference without a key reads.
const DefaultInstructionsKey = "AGENTS.md"

// Reads is what one Workspace reads: its roots, the namespaces whose trust
// labels matter and the ConfigMaps its instructions name. Gather reads
// exactly this and the controller's field indexes map a changed object back
// to the Workspaces whose Reads include it, so the two cannot drift apart.
type Reads struct {
	// Roots are the permitted roots in precedence order, every namespace
	// filled in: spec.roots, or by default [own namespace, platform
	// namespaces].
	Roots []v1alpha1.WorkspaceRoot
	// Instructions are spec.instructions in order, each with its namespace.
	Instructions []InstructionRead
	// Refused is the first reference into a namespace that is neither the
	// Workspace's own nor a platform namespace, a *RootNotPermittedError; the
	// references it refuses are left out above. Nil when there is none.
	Refused error
	// Own is the Workspace's namespace: its labels select the platform
	// extensions imposed on it.
	Own string
	// Platform are the platform namespaces, read whatever the roots say:
	// their imposed extensions apply to every Workspace they select.
	Platform []string
}

// InstructionRead is one entry of spec.instructions.
type InstructionRead struct {
	// Field is the entry's path, as in "spec.instructions[1]".
	Field string
	// Namespace is where the instruction comes from: the Workspace's own for
	// inline text, the ConfigMap's otherwise. Its trust level gates it.
	Namespace string
	// Inline is the text of an inline entry.
	Inline string
	// ConfigMap and Key name a ConfigMap entry's source; ConfigMap is empty
	// for inline text.
	ConfigMap, Key string
}

// ReadsOf returns what ws reads under the platform namespaces of pol.
func ReadsOf(ws *v1alpha1.Workspace, pol Policy) Reads {
	r := Reads{Own: ws.Namespace, Platform: pol.PlatformNamespaces}
	permitted := func(ns, field string) bool {
		if ns == ws.Namespace || pol.isPlatform(ns) {
			return true
		}
		if r.Refused == nil {
			r.Refused = &RootNotPermittedError{Workspace: ws.Namespace + "/" + ws.Name, Field: field, Namespace: ns}
		}
		return false
	}
	if len(ws.Spec.Roots) == 0 {
		r.Roots = append(r.Roots, v1alpha1.WorkspaceRoot{Name: DefaultRootName, Namespace: ws.Namespace})
		for i, ns := range pol.PlatformNamespaces {
			name := PlatformRootName
			if i > 0 {
				name += "-" + ns
			}
			if ns != ws.Namespace {
				r.Roots = append(r.Roots, v1alpha1.WorkspaceRoot{Name: name, Namespace: ns})
			}
		}
	}
	for i, root := range ws.Spec.Roots {
		root.Namespace = cmp.Or(root.Namespace, ws.Namespace)
		if permitted(root.Namespace, fmt.Sprintf("spec.roots[%d].namespace", i)) {
			r.Roots = append(r.Roots, root)
		}
	}
	for i, src := range ws.Spec.Instructions {
		in := InstructionRead{Field: fmt.Sprintf("spec.instructions[%d]", i), Namespace: ws.Namespace, Inline: src.Inline}
		if ref := src.ConfigMapKeyRef; ref != nil {
			in.Namespace = cmp.Or(ref.Namespace, ws.Namespace)
			in.ConfigMap, in.Key = ref.Name, cmp.Or(ref.Key, DefaultInstructionsKey)
			if !permitted(in.Namespace, in.Field+".configMapKeyRef.namespace") {
				continue
			}
		}
		r.Instructions = append(r.Instructions, in)
	}
	return r
}

// Namespaces lists every namespace the Workspace reads, once: its roots' and
// its instructions' (their trust labels decide what loads), its own (its
// labels select imposed extensions) and the platform namespaces (their
// imposed extensions apply whatever the roots say).
func (r Reads) Namespaces() []string {
	var out []string
	add := func(ns string) {
		if ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	for _, root := range r.Roots {
		add(root.Namespace)
	}
	for _, in := range r.Instructions {
		add(in.Namespace)
	}
	add(r.Own)
	for _, ns := range r.Platform {
		add(ns)
	}
	return out
}

// ConfigMaps lists "namespace/name" of every instructions ConfigMap.
func (r Reads) ConfigMaps() []string {
	var out []string
	for _, in := range r.Instructions {
		if in.ConfigMap != "" {
			out = append(out, in.Namespace+"/"+in.ConfigMap)
		}
	}
	return out
}

// Imposes reports whether an Extension may be imposed on the Workspace: it is
// in a platform namespace and not offered (Offered). Whether its namespace
// selector selects the Workspace's namespace is Gather's to decide.
func (r Reads) Imposes(e *v1alpha1.Extension) bool {
	return slices.Contains(r.Platform, e.Namespace) && !Offered(e)
}

// Selects reports whether a root reads an object of this namespace and
// labels. A selector that does not parse selects nothing; Gather reports it.
func (r Reads) Selects(namespace string, objLabels map[string]string) bool {
	for _, root := range r.Roots {
		if root.Namespace != namespace {
			continue
		}
		if sel, err := rootSelector(root); err == nil && sel.Matches(labels.Set(objLabels)) {
			return true
		}
	}
	return false
}

// rootSelector is the label selector of a root; no selector selects everything.
func rootSelector(root v1alpha1.WorkspaceRoot) (labels.Selector, error) {
	if root.Selector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(root.Selector)
}
