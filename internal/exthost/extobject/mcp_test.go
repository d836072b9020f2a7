package extobject_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
)

const mcpEndpoint = "http://everything.team-a.svc:3001/mcp"

// mcpExtension is an Extension of team-a whose server lists echo as ev_echo.
func mcpExtension() *v1alpha1.Extension {
	return &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "everything"},
		Spec: v1alpha1.ExtensionSpec{MCPServer: &v1alpha1.MCPServer{
			Service: &v1alpha1.MCPServiceReference{Name: "everything", Port: 3001, Path: "/mcp", Scheme: v1alpha1.SchemeHTTP},
			Tools:   v1alpha1.MCPToolSelection{Allow: []string{"echo"}, Prefix: "ev_"},
		}},
		Status: v1alpha1.ExtensionStatus{MCPServer: &v1alpha1.MCPServerStatus{Endpoint: mcpEndpoint, Tools: []v1alpha1.DiscoveredTool{
			{Name: "ev_echo", ServerName: "echo", InputSchema: &runtime.RawExtension{Raw: []byte(`{"type":"object"}`)}},
		}}}}
}

func loadMCP(t *testing.T, ext *v1alpha1.Extension, platform bool, builtin ...string) exthost.Outcome {
	t.Helper()
	var tools []contract.Tool
	for _, b := range builtin {
		tools = append(tools, contract.Tool{Name: b, Builtin: true})
	}
	h := exthost.NewHost(exthost.Options{Builtin: tools})
	return h.Load(context.Background(), extobject.FromObjectIn(ext, nil, platform), true)
}

func TestMCPServer_DiscoveredToolsLoadWithTheirServer(t *testing.T) {
	out := loadMCP(t, mcpExtension(), false)
	if out.Reason != "" || len(out.Tools) != 1 || out.Tools[0] != "ev_echo" {
		t.Fatalf("outcome = %+v, want ev_echo loaded", out)
	}
}

// Names that collide are refused like declared tools': with a built-in
// tool, and with a tool the extension declares itself.
func TestMCPServer_NamesCollidingWithBuiltinsOrDeclaredToolsAreRefused(t *testing.T) {
	if out := loadMCP(t, mcpExtension(), false, "ev_echo"); out.Reason != exthost.ReasonToolCollision {
		t.Fatalf("outcome = %+v, want %s", out, exthost.ReasonToolCollision)
	}
	ext := mcpExtension()
	ext.Spec.Tools = []v1alpha1.ExtensionTool{{Name: "ev_echo", Description: "mine"}}
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonDuplicateTool {
		t.Fatalf("outcome = %+v, want %s", out, exthost.ReasonDuplicateTool)
	}
}

// The status is input like the spec: a tool outside the allow list, a name
// without the prefix, or a list discovered at another endpoint never loads.
func TestMCPServer_StatusIsCheckedAgainstTheSpec(t *testing.T) {
	ext := mcpExtension()
	ext.Status.MCPServer.Tools = append(ext.Status.MCPServer.Tools, v1alpha1.DiscoveredTool{Name: "ev_get-env", ServerName: "get-env"})
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonInvalid || !strings.Contains(out.Message, "get-env") {
		t.Fatalf("outcome = %+v, want Invalid naming get-env", out)
	}
	ext = mcpExtension()
	ext.Status.MCPServer.Tools[0].Name = "bash"
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonInvalid {
		t.Fatalf("outcome = %+v, want Invalid for a name without the prefix", out)
	}
	ext = mcpExtension()
	ext.Spec.MCPServer.Service.Port = 3002
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonImportFailed || !strings.Contains(out.Message, "not listed the tools") {
		t.Fatalf("outcome = %+v, want ImportFailed until the new endpoint is discovered", out)
	}
}

// A tenant's Extension may name neither a URL nor another namespace's
// Service; a platform Extension may.
func TestMCPServer_OnlyPlatformExtensionsNameURLsOrOtherNamespaces(t *testing.T) {
	ext := mcpExtension()
	ext.Spec.MCPServer.Service.Namespace = "mcp-servers"
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonInvalid || !strings.Contains(out.Message, "only an Extension of a platform namespace") {
		t.Fatalf("tenant, other namespace: outcome = %+v", out)
	}
	// A platform's Service is HTTPS with a caBundle (platform_endpoint_test.go).
	ext.Spec.MCPServer.Service.Scheme, ext.Spec.MCPServer.Service.CABundle = v1alpha1.SchemeHTTPS, []byte("pem")
	ext.Status.MCPServer.Endpoint = "https://everything.mcp-servers.svc:3001/mcp"
	if out := loadMCP(t, ext, true); out.Reason != "" {
		t.Fatalf("platform, other namespace: outcome = %+v, want loaded", out)
	}
	ext = mcpExtension()
	ext.Spec.MCPServer.Service, ext.Spec.MCPServer.URL = nil, "https://mcp.example.com/mcp"
	ext.Status.MCPServer.Endpoint = "https://mcp.example.com/mcp"
	if out := loadMCP(t, ext, false); out.Reason != exthost.ReasonInvalid || !strings.Contains(out.Message, "by URL") {
		t.Fatalf("tenant, URL: outcome = %+v", out)
	}
	h := exthost.NewHost(exthost.Options{})
	if out := h.Load(context.Background(), extobject.FromObjectIn(ext, nil, true), true); out.Reason != "" {
		t.Fatalf("platform, URL: outcome = %+v, want loaded", out)
	}
	if m := h.Registry().Tools[0].MCP; m == nil || !m.External {
		t.Fatalf("a URL's tool = %+v, want it marked external (no service token)", m)
	}
}
