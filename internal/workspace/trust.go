package workspace

import (
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// Policy is the manager's trust configuration (DESIGN: trust and tenancy).
type Policy struct {
	// PlatformNamespaces hold admin-owned resources, always trusted.
	PlatformNamespaces []string
	// DefaultTrust applies to project namespaces without a valid trust label.
	DefaultTrust v1alpha1.TrustLevel
}

// TrustOf returns the trust level of a namespace: platform namespaces are
// trusted; a project namespace has the level of its loadout.dev/trust label,
// or the default when the label is absent or unknown. An unknown value falls
// back to the default rather than to trusted, so a typo never raises trust.
func (p Policy) TrustOf(namespace string, labels map[string]string) v1alpha1.TrustLevel {
	if p.isPlatform(namespace) {
		return v1alpha1.TrustTrusted
	}
	switch l := v1alpha1.TrustLevel(labels[v1alpha1.TrustLabel]); l {
	case v1alpha1.TrustUntrusted, v1alpha1.TrustRestricted, v1alpha1.TrustTrusted:
		return l
	}
	return p.DefaultTrust
}

func (p Policy) isPlatform(namespace string) bool {
	return slices.Contains(p.PlatformNamespaces, namespace)
}

// LoadsData reports whether skills, templates and instructions of a namespace
// at this trust level load (SPEC R-EXT-4).
func LoadsData(t v1alpha1.TrustLevel) bool { return t != v1alpha1.TrustUntrusted }

// LoadsExtensions reports whether extensions of a namespace at this trust
// level load (SPEC R-EXT-4).
func LoadsExtensions(t v1alpha1.TrustLevel) bool { return t == v1alpha1.TrustTrusted }

// RootNotPermittedError: a Workspace root or instructions reference names a
// namespace that is neither its own nor a platform namespace.
type RootNotPermittedError struct {
	Workspace string
	Field     string
	Namespace string
}

func (e *RootNotPermittedError) Error() string {
	return fmt.Sprintf("workspace %s: %s: namespace %q is neither the workspace's own nor a platform namespace", e.Workspace, e.Field, e.Namespace)
}

// Reason implements resources.ReasonedError.
func (e *RootNotPermittedError) Reason() string { return v1alpha1.ReasonRootNotPermitted }

// InstructionsNotFoundError: an instructions ConfigMap or key is missing.
type InstructionsNotFoundError struct {
	Workspace string
	Field     string
	Namespace string
	Name, Key string
}

func (e *InstructionsNotFoundError) Error() string {
	return fmt.Sprintf("workspace %s: %s: ConfigMap %s/%s has no key %q", e.Workspace, e.Field, e.Namespace, e.Name, e.Key)
}

// Reason implements resources.ReasonedError.
func (e *InstructionsNotFoundError) Reason() string { return v1alpha1.ReasonInstructionsNotFound }
