package workspace

import (
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Policy is the manager's trust configuration (docs/security.md).
type Policy struct {
	// PlatformNamespaces hold admin-owned resources. Each counts only with
	// the label loadout.dev/trust (see TrustOf).
	PlatformNamespaces []string
	// DefaultTrust applies to project namespaces without a valid trust label.
	DefaultTrust vocab.TrustLevel
}

// TrustOf returns the trust level of a namespace: the level of its
// loadout.dev/trust label. Without the label, or with an unknown value, a
// project namespace has the default level, and a platform namespace is
// untrusted. The platform list only names namespaces; the label, which only
// trust admins may set (config/policy), says that the namespace is really
// the platform's. So a tenant allowed to create namespaces gains nothing by
// creating a listed platform namespace that does not exist yet. An unknown
// value never raises trust, so a typo cannot either.
func (p Policy) TrustOf(namespace string, labels map[string]string) vocab.TrustLevel {
	if l, ok := labelledTrust(labels); ok {
		return l
	}
	if p.isPlatform(namespace) {
		return vocab.TrustUntrusted
	}
	return p.DefaultTrust
}

// UnlabelledPlatform reports whether namespace is a platform namespace that
// counts for nothing because it lacks a valid loadout.dev/trust label.
func (p Policy) UnlabelledPlatform(namespace string, labels map[string]string) bool {
	_, ok := labelledTrust(labels)
	return !ok && p.isPlatform(namespace)
}

func labelledTrust(labels map[string]string) (vocab.TrustLevel, bool) {
	switch l := vocab.TrustLevel(labels[vocab.TrustLabel]); l {
	case vocab.TrustUntrusted, vocab.TrustRestricted, vocab.TrustTrusted:
		return l, true
	}
	return "", false
}

func (p Policy) isPlatform(namespace string) bool {
	return slices.Contains(p.PlatformNamespaces, namespace)
}

// LoadsData reports whether skills, templates and instructions of a namespace
// at this trust level load (rule R-EXT-4).
func LoadsData(t vocab.TrustLevel) bool { return t != vocab.TrustUntrusted }

// LoadsExtensions reports whether extensions of a namespace at this trust
// level load (rule R-EXT-4).
func LoadsExtensions(t vocab.TrustLevel) bool { return t == vocab.TrustTrusted }

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
func (e *RootNotPermittedError) Reason() vocab.ConditionReason {
	return vocab.ReasonRootNotPermitted
}

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
func (e *InstructionsNotFoundError) Reason() vocab.ConditionReason {
	return vocab.ReasonInstructionsNotFound
}
