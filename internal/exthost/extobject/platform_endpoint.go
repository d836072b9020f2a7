package extobject

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// checkPlatformEndpoint refuses a Service reference of a platform
// Extension that hostd calls from the pod (a webhook hook, a tool's
// implementation, an MCP Service) unless it is HTTPS with a caBundle.
// Name resolution inside the pod is the tenant's to shape, and a root agent
// can bind any port; a certificate from the platform's CA is the one thing
// the agent cannot present. A tenant's own Services keep `scheme: HTTP`:
// redirecting them fools only the tenant.
func checkPlatformEndpoint(platform bool, p *field.Path, scheme v1alpha1.ServiceScheme, caBundle []byte) *field.Error {
	if !platform {
		return nil
	}
	if scheme == v1alpha1.SchemeHTTP {
		return field.Forbidden(p.Child("scheme"), "plain HTTP: "+exthost.PlatformEndpointRule)
	}
	if len(caBundle) == 0 {
		return field.Required(p.Child("caBundle"), exthost.PlatformEndpointRule)
	}
	return nil
}
