package extobject

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/mcppin"
)

// defaultMCPPath is where an MCP Service's endpoint is when the reference
// names no path (the streamable HTTP convention).
const defaultMCPPath = "/mcp"

// MCPEndpoint is where an extension's MCP server is and how to call it.
type MCPEndpoint struct {
	URL      string
	CABundle []byte
	// External: a URL outside the cluster, which gets no service token.
	External bool
	Timeout  time.Duration
}

// ResolveMCPServer resolves spec.mcpServer of an Extension in namespace ns.
// platform says whether ns is a trusted platform namespace: only there may an
// Extension name another namespace's Service or a URL, so a tenant cannot
// point hostd (and its identity) at a server the platform did not choose.
func ResolveMCPServer(ns string, platform bool, s *v1alpha1.MCPServer, resolve WebhookResolver) (MCPEndpoint, *field.Error) {
	p := field.NewPath("spec", "mcpServer")
	if resolve == nil {
		resolve = DefaultResolver
	}
	timeout := time.Duration(s.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = exthost.DefaultToolTimeout
	}
	timeout = min(timeout, exthost.MaxToolTimeout)
	if s.HeadersFrom != nil && !platform {
		// The headers are a platform credential: a tenant's Secret would be
		// the tenant's own to read anyway, and hostd fetches headers only
		// from the platform's namespaces.
		return MCPEndpoint{}, field.Forbidden(p.Child("headersFrom"),
			fmt.Sprintf("only an Extension of a platform namespace may send headers from a Secret; this one is in %s", ns))
	}
	switch {
	case s.Service != nil && s.URL != "", s.Service == nil && s.URL == "":
		return MCPEndpoint{}, field.Invalid(p, "", "exactly one of service or url must be set")
	case s.Service != nil:
		if s.HeadersFrom != nil && s.Service.Scheme == v1alpha1.SchemeHTTP {
			// The CRD refuses this too; an Extension stored before that
			// rule must not send an API key in the clear either.
			return MCPEndpoint{}, field.Invalid(p.Child("headersFrom"), s.HeadersFrom.SecretRef.Name,
				"headersFrom needs HTTPS: a Service with scheme HTTP would carry the Secret's headers (an API key) in the clear")
		}
		target := ns
		if s.Service.Namespace != "" && s.Service.Namespace != ns {
			if !platform {
				return MCPEndpoint{}, field.Forbidden(p.Child("service", "namespace"),
					fmt.Sprintf("only an Extension of a platform namespace may name a Service of another namespace (%s); this one is in %s", s.Service.Namespace, ns))
			}
			target = s.Service.Namespace
		}
		ref := v1alpha1.ServiceReference{Name: s.Service.Name, Port: s.Service.Port, Path: s.Service.Path,
			Scheme: s.Service.Scheme, CABundle: s.Service.CABundle}
		if ref.Path == "" {
			ref.Path = defaultMCPPath
		}
		u, err := resolve(target, ref)
		if err != nil {
			return MCPEndpoint{}, field.Invalid(p.Child("service"), s.Service.Name, err.Error())
		}
		return MCPEndpoint{URL: u, CABundle: s.Service.CABundle, Timeout: timeout}, nil
	default:
		if !platform {
			return MCPEndpoint{}, field.Forbidden(p.Child("url"),
				fmt.Sprintf("only an Extension of a platform namespace may name an MCP server by URL; this one is in %s", ns))
		}
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
			return MCPEndpoint{}, field.Invalid(p.Child("url"), s.URL, "must be an https:// URL with a host, no user info and no fragment")
		}
		return MCPEndpoint{URL: u.String(), CABundle: s.CABundle, External: true, Timeout: timeout}, nil
	}
}

// errNotDiscovered is an MCP extension whose tools the manager has not
// listed at its current endpoint yet: an import failure, retried, never a
// context without the tools.
var errNotDiscovered = errors.New("not discovered")

// mcpTools turns status.mcpServer into the extension's tools, checking the
// status against the spec again: only allowed tools under the current
// prefix, discovered at the current endpoint, with names, descriptions and
// schemas that pass the same checks as declared tools, and only
// definitions that match their pins (internal/mcppin). The status is input like the
// spec, whoever wrote it.
func mcpTools(spec *v1alpha1.MCPServer, status *v1alpha1.MCPServerStatus, ep MCPEndpoint) ([]exthost.Tool, field.ErrorList) {
	p := field.NewPath("status", "mcpServer")
	if status == nil || status.Endpoint != ep.URL {
		return nil, field.ErrorList{field.InternalError(p, fmt.Errorf("%w: the manager has not listed the tools of %s yet (see the Extension's ToolsDiscovered condition)", errNotDiscovered, ep.URL))}
	}
	var errs field.ErrorList
	out := make([]exthost.Tool, 0, len(status.Tools))
	for i, d := range status.Tools {
		tp := p.Child("tools").Index(i)
		name := string(d.Name)
		switch {
		case !slices.Contains(spec.Tools.Allow, d.ServerName):
			errs = append(errs, field.NotSupported(tp.Child("serverName"), d.ServerName, spec.Tools.Allow))
			continue
		case name != spec.Tools.Prefix+d.ServerName:
			errs = append(errs, field.Invalid(tp.Child("name"), name, "must be spec.mcpServer.tools.prefix followed by serverName"))
			continue
		case !toolNamePattern.MatchString(name):
			errs = append(errs, field.Invalid(tp.Child("name"), name, "must match "+toolNamePattern.String()))
			continue
		}
		if why := DescriptionRefusal(d.Description); why != "" {
			errs = append(errs, field.Invalid(tp.Child("description"), d.Description, why))
			continue
		}
		if err := mcppin.Served(&status.Tools[i], spec.Tools); err != nil {
			// Pins changed since the last discovery (or someone else
			// wrote the status): a definition nobody reviewed is not
			// served. The next discovery, which a spec change triggers,
			// brings the pinned one.
			continue
		}
		var schema []byte
		if d.InputSchema != nil {
			schema = d.InputSchema.Raw
			if _, err := exthost.CompileInputSchema(schema); err != nil {
				errs = append(errs, field.Invalid(tp.Child("inputSchema"), "(the schema)", err.Error()))
				continue
			}
		}
		readOnly := d.Annotations != nil && d.Annotations.ReadOnlyHint
		out = append(out, exthost.Tool{Name: name, Description: d.Description, ReadOnly: readOnly, InputSchema: schema,
			MCP: &contract.ToolMCP{URL: ep.URL, Tool: d.ServerName, TimeoutSeconds: int32(ep.Timeout / time.Second),
				CABundle: ep.CABundle, External: ep.External}, Traits: discoveredTraits(spec, &status.Tools[i])})
	}
	return out, errs
}

// compileMCPServer checks spec.mcpServer and, for a load, returns its
// discovered tools. Validation resolves the endpoint's shape only: whether
// the namespace may name it is the load's (and the discovery's) to decide.
func (sc specContext) compileMCPServer(s *v1alpha1.MCPServer) ([]exthost.Tool, field.ErrorList) {
	ep, ferr := ResolveMCPServer(sc.namespace, sc.platform || !sc.loading, s, sc.resolve)
	if ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	if ferr := sc.checkMCPService(s); ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	if !sc.loading {
		return nil, nil
	}
	tools, errs := mcpTools(s, sc.mcpStatus, ep)
	if s.HeadersFrom != nil {
		// Only the Extension's name travels: hostd asks the manager for
		// the headers, which never enter the context.
		for _, t := range tools {
			t.MCP.HeadersFrom = sc.namespace + "/" + sc.objectName
		}
	}
	return tools, errs
}

// discovered fails an MCP extension's import until its tools are listed at
// the endpoint its spec names now: retried, the Workspace keeps its last
// good context meanwhile. A spec that cannot resolve is invalid.
func (sc specContext) discovered(s *v1alpha1.MCPServer) error {
	ep, ferr := ResolveMCPServer(sc.namespace, sc.platform, s, sc.resolve)
	if ferr == nil {
		ferr = sc.checkMCPService(s)
	}
	if ferr != nil {
		return exthost.Invalid(field.ErrorList{ferr})
	}
	if sc.mcpStatus == nil || sc.mcpStatus.Endpoint != ep.URL {
		return fmt.Errorf("spec.mcpServer: %w: the manager has not listed the tools of %s yet (see the Extension's ToolsDiscovered condition)", errNotDiscovered, ep.URL)
	}
	return nil
}

// checkMCPService holds a platform Extension's MCP Service to the rule of
// its other Services (checkPlatformEndpoint): hostd calls it from the pod.
// The manager's discovery runs in the manager's pod, which the agent cannot
// redirect, so ResolveMCPServer itself does not check it.
func (sc specContext) checkMCPService(s *v1alpha1.MCPServer) *field.Error {
	if s.Service == nil {
		return nil
	}
	return checkPlatformEndpoint(sc.platform, field.NewPath("spec", "mcpServer", "service"), s.Service.Scheme, s.Service.CABundle)
}

// DiscoveredStatus is a discovery as an Extension's status records it, each
// tool with its digest (mcppin.FromClient). A description that breaks the
// rule declared tools obey (DescriptionRefusal, rule R-TL-1) is an error
// naming the tool. The manager's discovery (which then keeps the last good
// list) and `loadout mcp pin` (which then writes no pins) share it.
func DiscoveredStatus(endpoint string, found mcpclient.Discovery) (*v1alpha1.MCPServerStatus, error) {
	st := &v1alpha1.MCPServerStatus{Endpoint: endpoint, Server: found.Server}
	var errs []error
	for _, t := range found.Tools {
		if why := DescriptionRefusal(t.Description); why != "" {
			errs = append(errs, fmt.Errorf("tool %q: description %s", t.ServerName, why))
			continue
		}
		dt, err := mcppin.FromClient(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st.Tools = append(st.Tools, dt)
	}
	return st, errors.Join(errs...)
}
