// Package kubescheme builds the runtime.Scheme Loadout's clients and manager
// use: client-go's built-in kinds and Loadout's API. Every caller gets its own
// scheme; nothing is registered into client-go's global one.
package kubescheme

import (
	"k8s.io/apimachinery/pkg/runtime"
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
