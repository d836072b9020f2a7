package resources

import (
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// TrustOf returns the trust level of a namespace (DESIGN: trust and tenancy):
// platform namespaces are trusted; a project namespace has the level of its
// loadout.dev/trust label, or def when the label is absent or unknown. An
// unknown value falls back to def rather than to trusted, so a typo never
// raises trust.
func TrustOf(namespace string, labels map[string]string, platform []string, def v1alpha1.TrustLevel) v1alpha1.TrustLevel {
	if slices.Contains(platform, namespace) {
		return v1alpha1.TrustTrusted
	}
	switch l := v1alpha1.TrustLevel(labels[v1alpha1.TrustLabel]); l {
	case v1alpha1.TrustUntrusted, v1alpha1.TrustRestricted, v1alpha1.TrustTrusted:
		return l
	}
	return def
}

// LoadsData reports whether skills, templates and instructions of a namespace
// at this trust level load (SPEC R-EXT-4).
func LoadsData(t v1alpha1.TrustLevel) bool { return t != v1alpha1.TrustUntrusted }

// LoadsExtensions reports whether extensions of a namespace at this trust
// level load (SPEC R-EXT-4).
func LoadsExtensions(t v1alpha1.TrustLevel) bool { return t == v1alpha1.TrustTrusted }

// DefaultRootName and PlatformRootName name the default roots of a Workspace.
const (
	DefaultRootName  = "project"
	PlatformRootName = "platform"
)

// WorkspaceRoots returns the Workspace's ordered roots with every namespace
// filled in: spec.roots, or by default [own namespace, platform namespaces].
// A root in any other namespace is a *RootNotPermittedError.
func WorkspaceRoots(ws *v1alpha1.Workspace, platform []string) ([]v1alpha1.WorkspaceRoot, error) {
	if len(ws.Spec.Roots) == 0 {
		roots := []v1alpha1.WorkspaceRoot{{Name: DefaultRootName, Namespace: ws.Namespace}}
		for i, ns := range platform {
			name := PlatformRootName
			if i > 0 {
				name += "-" + ns
			}
			if ns != ws.Namespace {
				roots = append(roots, v1alpha1.WorkspaceRoot{Name: name, Namespace: ns})
			}
		}
		return roots, nil
	}
	roots := make([]v1alpha1.WorkspaceRoot, 0, len(ws.Spec.Roots))
	for i, r := range ws.Spec.Roots {
		if r.Namespace == "" {
			r.Namespace = ws.Namespace
		}
		if err := CheckNamespacePermitted(ws, r.Namespace, platform, fieldIndex("spec.roots", i)+".namespace"); err != nil {
			return nil, err
		}
		roots = append(roots, r)
	}
	return roots, nil
}

// CheckNamespacePermitted refuses a reference from a Workspace into a
// namespace that is neither its own nor a platform namespace; field names the
// referring field in the error.
func CheckNamespacePermitted(ws *v1alpha1.Workspace, namespace string, platform []string, field string) error {
	if namespace == ws.Namespace || slices.Contains(platform, namespace) {
		return nil
	}
	return &RootNotPermittedError{Workspace: ws.Namespace + "/" + ws.Name, Field: field, Namespace: namespace}
}
