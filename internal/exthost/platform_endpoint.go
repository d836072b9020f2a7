package exthost

import (
	"net/url"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/internal/outbound"
)

// PlatformEndpointRule is why a platform Extension's Services are reached
// only over HTTPS verified against the platform's own caBundle.
const PlatformEndpointRule = "a platform Extension's Service is called by hostd inside the agent's pod, whose /etc/hosts, " +
	"resolver and network the agent shares: it must be scheme HTTPS with a caBundle, so that a listener of the agent's " +
	"cannot answer in the platform's name (docs/security.md, \"Platform endpoints a pod cannot redirect\")"

// checkImposedWebhook refuses an imposed (platform) hook's published target
// unless it is https:// with a caBundle. The manager refuses such a spec
// (extobject); hostd checks again what it is about to call, so a context
// published before that rule, or by a manager without it, fails closed
// instead of letting the agent answer the platform's hook.
func checkImposedWebhook(p *field.Path, t outbound.Target) *field.Error {
	if u, err := url.Parse(t.URL); err != nil || u.Scheme != "https" {
		return field.Forbidden(p.Child("url"), t.URL+": "+PlatformEndpointRule)
	}
	if len(t.CABundle) == 0 {
		return field.Required(p.Child("caBundle"), PlatformEndpointRule)
	}
	return nil
}
