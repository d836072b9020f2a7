// Package kubescheme builds the runtime.Scheme Loadout's clients and manager
// use: client-go's built-in kinds and Loadout's API. Every caller gets its own
// scheme; nothing is registered into client-go's global one.
package kubescheme

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// New returns a scheme with client-go's kinds and loadout.dev/v1alpha1.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	// Both only fail on a kind registered twice under different Go types,
	// a programming error this package cannot make.
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// ManagerGroupVersions are the group versions of every kind the manager's
// own clients and caches touch: ConfigMaps, Secrets, Namespaces and Pods,
// and Loadout's API. Leases, Events and TokenReviews go through client-go's
// typed clients, which carry their own scheme.
var ManagerGroupVersions = []schema.GroupVersion{corev1.SchemeGroupVersion, v1alpha1.GroupVersion}

// NewManager returns the manager's scheme: ManagerGroupVersions alone.
// client-go's 60-odd group versions cost a manager process about 180 KiB
// of types and conversion functions it never uses (docs/benchmarks.md,
// "### Shards"); a kind outside it fails its first request with "no kind
// is registered", which the suites would show.
func NewManager() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}
