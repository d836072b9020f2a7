package extobject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// maxManifestBytes bounds a service-backed extension's manifest.
const maxManifestBytes = 1 << 20

// WebhookResolver turns a Service reference into the URL to call. The host
// always passes the extension's own namespace: an extension can reach only
// Services next to it.
type WebhookResolver func(namespace string, ref v1alpha1.ServiceReference) (string, error)

// DefaultResolver resolves to https://<name>.<namespace>.svc:<port><path>
// (http:// only for an explicit scheme HTTP), with the API's defaults (port
// 443, path /) for unset fields.
func DefaultResolver(namespace string, ref v1alpha1.ServiceReference) (string, error) {
	if ref.Name == "" || namespace == "" {
		return "", errors.New("service name and namespace are required")
	}
	// The CRD schema admits only a Service name, but a service-backed
	// extension's manifest is decoded without it: a name such as
	// "169.254.169.254/x?" would otherwise put another host in the URL.
	// Checked here, every caller gets <name>.<namespace>.svc or an error.
	if errs := validation.IsDNS1035Label(ref.Name); len(errs) > 0 {
		return "", fmt.Errorf("service name %q: %s", ref.Name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", fmt.Errorf("namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	if ref.Port < 0 || ref.Port > 65535 {
		return "", fmt.Errorf("port %d is out of range", ref.Port)
	}
	port, path := ref.Port, ref.Path
	if port == 0 {
		port = 443
	}
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") || containsDotDot(path) {
		return "", fmt.Errorf("path %q must start with '/' and have no '..' segment", path)
	}
	scheme := "https"
	switch ref.Scheme {
	case "", v1alpha1.SchemeHTTPS:
	case v1alpha1.SchemeHTTP:
		if len(ref.CABundle) > 0 {
			return "", errors.New("caBundle needs scheme HTTPS")
		}
		scheme = "http"
	default:
		return "", fmt.Errorf("scheme %q must be HTTPS or HTTP", ref.Scheme)
	}
	return fmt.Sprintf("%s://%s.%s.svc:%d%s", scheme, ref.Name, namespace, port, path), nil
}

func containsDotDot(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// FromObject is the exthost.Source of an Extension object. Without spec.source the
// spec itself is the definition; with it, the import step fetches the
// manifest (an ExtensionSpec as JSON, see docs/hostd.md) from that Service.
// Either way nothing is read or contacted before Load has decided trust.
// resolve may be nil for DefaultResolver.
func FromObject(ext *v1alpha1.Extension, resolve WebhookResolver) exthost.Source {
	return FromObjectIn(ext, resolve, false)
}

// FromObjectIn is FromObject for an Extension whose namespace is (platform)
// or is not a trusted platform namespace, which decides what its
// spec.mcpServer may name (ResolveMCPServer). An MCP extension's tools come
// from its status, as the manager discovered them; until they are
// discovered at the spec's endpoint the import fails, and is retried.
func FromObjectIn(ext *v1alpha1.Extension, resolve WebhookResolver, platform bool) exthost.Source {
	if resolve == nil {
		resolve = DefaultResolver
	}
	ext = ext.DeepCopy() // later edits to the caller's object cannot change what loads
	id, ns := ext.LogicalName(), ext.Namespace
	sc := specContext{extension: id, objectName: ext.Name, namespace: ns, resolve: resolve, platform: platform, loading: true, mcpStatus: ext.Status.MCPServer}
	return exthost.Source{
		ID:        id,
		Namespace: ns,
		Import: func(ctx context.Context, env exthost.Env) (exthost.Factory, error) {
			sc := sc // one per import: imports may run concurrently
			sc.client = env.Outbound
			spec := &ext.Spec
			if spec.Source != nil {
				fetched, err := fetchManifest(ctx, env.Outbound, resolve, ns, spec.Source.Service)
				if err != nil {
					return nil, err
				}
				if fetched.Name != "" && string(fetched.Name) != id {
					return nil, &exthost.InvalidError{Errs: []error{fmt.Errorf("manifest names extension %q, expected %q", fetched.Name, id)}}
				}
				spec = fetched
			}
			if spec.MCPServer != nil {
				if err := sc.discovered(spec.MCPServer); err != nil {
					return nil, err
				}
			}
			return specFactory(spec, sc), nil
		},
	}
}

// fetchManifest is the import step of a service-backed extension.
// The client never follows a redirect and bounds the call by its own deadline;
// nothing of an error answer's body enters the error.
func fetchManifest(ctx context.Context, client outbound.Doer, resolve WebhookResolver, namespace string, ref v1alpha1.ServiceReference) (*v1alpha1.ExtensionSpec, error) {
	url, err := resolve(namespace, ref)
	if err != nil {
		return nil, fmt.Errorf("resolve manifest service: %w", err)
	}
	resp, err := client.Do(ctx, outbound.Request{
		Method: http.MethodGet, Target: outbound.Target{URL: url, CABundle: ref.CABundle},
		Header: http.Header{"Accept": {"application/json"}},
	})
	if err != nil {
		return nil, fmt.Errorf("fetch manifest from %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch manifest from %s: answered %d, want 200", url, resp.StatusCode)
	}
	if len(resp.Body) > maxManifestBytes {
		return nil, fmt.Errorf("manifest from %s exceeds %d bytes", url, maxManifestBytes)
	}
	return DecodeManifest(resp.Body)
}

// DecodeManifest parses a service-backed extension's manifest strictly: an
// unknown field is an error, so a typo cannot silently drop a policy.
func DecodeManifest(body []byte) (*v1alpha1.ExtensionSpec, error) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	var spec v1alpha1.ExtensionSpec
	if err := dec.Decode(&spec); err != nil {
		return nil, &exthost.InvalidError{Errs: []error{fmt.Errorf("manifest: %w", err)}}
	}
	if dec.More() {
		return nil, &exthost.InvalidError{Errs: []error{errors.New("manifest: trailing data after the JSON document")}}
	}
	if spec.Source != nil {
		return nil, &exthost.InvalidError{Errs: []error{errors.New("manifest: source must not be set; a manifest cannot point elsewhere")}}
	}
	if spec.MCPServer != nil {
		return nil, &exthost.InvalidError{Errs: []error{errors.New("manifest: mcpServer must not be set; only an Extension object names an MCP server")}}
	}
	return &spec, nil
}

// ValidateObject reports what keeps an Extension from loading beyond what
// admission checks: CEL that does not compile, input schemas that are not
// object schemas, unresolvable webhook references. Each error names its field
// path (spec.hooks[0].cel.expression) for the Valid condition. A
// service-backed extension's manifest is not fetched here: validation never
// contacts anything.
func ValidateObject(ext *v1alpha1.Extension) []error {
	return validateObject(ext, false, false)
}

// ValidatePlatformObject is ValidateObject for an Extension of a platform
// namespace: the Services hostd calls for it must also be HTTPS with a
// caBundle (checkPlatformEndpoint).
func ValidatePlatformObject(ext *v1alpha1.Extension) []error {
	return validateObject(ext, false, true)
}

// ValidateObjectSyntax is ValidateObject for an Extension that cannot load
// where it is (a namespace that is not trusted): its CEL hooks are parsed,
// not type-checked. Type-checking is the expensive step a hostile tenant
// would aim at, and an extension that never loads gains
// nothing from it; it is checked in full once its namespace becomes trusted.
func ValidateObjectSyntax(ext *v1alpha1.Extension) []error {
	return validateObject(ext, true, false)
}

func validateObject(ext *v1alpha1.Extension, syntaxOnly, platform bool) []error {
	sc := specContext{extension: ext.LogicalName(), namespace: ext.Namespace, resolve: validationResolver, syntaxOnly: syntaxOnly, platform: platform}
	_, errs := compileSpec(&ext.Spec, field.NewPath("spec"), sc)
	if !syntaxOnly {
		// Where extensions cannot load, content rules are ignored too:
		// never type-checked, as hooks' CEL is not.
		errs = append(errs, contentRuleErrors(&ext.Spec)...)
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}

// validationResolver checks a reference the way DefaultResolver would without
// needing the namespace, which a freshly created object may not carry yet.
func validationResolver(_ string, ref v1alpha1.ServiceReference) (string, error) {
	return DefaultResolver("validation", ref)
}
