package extobject

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// platformEndpointRule is why a platform Extension's Services must be
// reached over HTTPS verified against the platform's own caBundle.
const platformEndpointRule = "a platform Extension's Service is called by hostd inside the agent's pod, whose /etc/hosts, " +
	"resolver and network the agent shares: it must be scheme HTTPS with a caBundle, so that a listener of the agent's " +
	"cannot answer in the platform's name (docs/security.md, \"Platform endpoints a pod cannot redirect\")"

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
		return field.Forbidden(p.Child("scheme"), "plain HTTP: "+platformEndpointRule)
	}
	if len(caBundle) == 0 {
		return field.Required(p.Child("caBundle"), platformEndpointRule)
	}
	return nil
}
