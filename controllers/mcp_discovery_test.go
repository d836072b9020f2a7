package controllers

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/workspace"
)

func mcpExt(ns string) *v1alpha1.Extension {
	return &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tools"},
		Spec: v1alpha1.ExtensionSpec{MCPServer: &v1alpha1.MCPServer{
			Service: &v1alpha1.MCPServiceReference{Name: "mcp", Port: 8080, Scheme: v1alpha1.SchemeHTTP},
			Tools:   v1alpha1.MCPToolSelection{Allow: []string{"a"}},
		}}}
}

// An MCP server of an Extension that cannot load, or that names what only
// a platform namespace may, is never contacted (R-EXT-1).
func TestMCPDiscovery_UntrustedOrNotPermittedIsNeverContacted_REXT1(t *testing.T) {
	var calls atomic.Int32
	d := newMCPDiscoverer(outbound.DoerFunc(func(context.Context, outbound.Request) (*outbound.Response, error) {
		calls.Add(1)
		return nil, errors.New("contacted")
	}), 0, nil)
	pol := workspace.Policy{PlatformNamespaces: []string{"loadout-system"}}
	cases := map[string]struct {
		ext   *v1alpha1.Extension
		trust vocab.TrustLevel
		says  string
	}{
		"restricted": {mcpExt("team-a"), vocab.TrustRestricted, "loads no extensions"},
		"untrusted":  {mcpExt("team-a"), vocab.TrustUntrusted, "loads no extensions"},
		"tenant URL": {func() *v1alpha1.Extension {
			e := mcpExt("team-a")
			e.Spec.MCPServer.Service, e.Spec.MCPServer.URL = nil, "https://mcp.example.com/mcp"
			return e
		}(), vocab.TrustTrusted, "only an Extension of a platform namespace"},
		"tenant other namespace": {func() *v1alpha1.Extension {
			e := mcpExt("team-a")
			e.Spec.MCPServer.Service.Namespace = "shared-mcp"
			return e
		}(), vocab.TrustTrusted, "only an Extension of a platform namespace"},
		"tenant headersFrom": {func() *v1alpha1.Extension {
			e := mcpExt("team-a")
			e.Spec.MCPServer.HeadersFrom = &v1alpha1.MCPHeadersSource{SecretRef: v1alpha1.MCPHeadersSecretRef{Name: "api-key"}}
			return e
		}(), vocab.TrustTrusted, "spec.mcpServer.headersFrom: Forbidden: only an Extension of a platform namespace may send headers from a Secret"},
		// R-EXT-7: an API key never crosses the network in the clear, even
		// for an Extension stored before the CRD refused it.
		"platform headersFrom over plain HTTP": {func() *v1alpha1.Extension {
			e := mcpExt("loadout-system")
			e.Spec.MCPServer.HeadersFrom = &v1alpha1.MCPHeadersSource{SecretRef: v1alpha1.MCPHeadersSecretRef{Name: "api-key"}}
			return e
		}(), vocab.TrustTrusted, "spec.mcpServer.headersFrom: Invalid value: \"api-key\": headersFrom needs HTTPS"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if again := d.discover(context.Background(), tc.ext, pol, tc.trust); again != 0 {
				t.Errorf("requeue after %s, want none (a change re-runs it)", again)
			}
			c := meta.FindStatusCondition(tc.ext.Status.Conditions, string(vocab.ConditionToolsDiscovered))
			if c == nil || c.Reason != string(vocab.ReasonDiscoveryNotAllowed) || !strings.Contains(c.Message, tc.says) {
				t.Fatalf("condition = %+v, want %s saying %q", c, vocab.ReasonDiscoveryNotAllowed, tc.says)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the server was contacted %d times", n)
	}
}

// A failed discovery keeps the last good list, says why, and backs off (R-EXT-6).
func TestMCPDiscovery_FailureKeepsTheLastGoodListAndBacksOff(t *testing.T) {
	d := newMCPDiscoverer(outbound.DoerFunc(func(context.Context, outbound.Request) (*outbound.Response, error) {
		return nil, errors.New("connection refused")
	}), 0, nil)
	e := mcpExt("team-a")
	good := &v1alpha1.MCPServerStatus{Endpoint: "http://mcp.team-a.svc:8080/mcp", Tools: []v1alpha1.DiscoveredTool{{Name: "a", ServerName: "a"}}}
	e.Status.MCPServer = good.DeepCopy()
	pol := workspace.Policy{}
	first := d.discover(context.Background(), e, pol, vocab.TrustTrusted)
	second := d.discover(context.Background(), e, pol, vocab.TrustTrusted)
	if first <= 0 || second <= first {
		t.Fatalf("retries after %s then %s, want a growing backoff", first, second)
	}
	c := meta.FindStatusCondition(e.Status.Conditions, string(vocab.ConditionToolsDiscovered))
	if c == nil || c.Reason != string(vocab.ReasonDiscoveryFailed) || !strings.Contains(c.Message, "connection refused") || !strings.Contains(c.Message, "last good list (1 tools") {
		t.Fatalf("condition = %+v", c)
	}
	if e.Status.MCPServer.Endpoint != good.Endpoint || len(e.Status.MCPServer.Tools) != 1 {
		t.Fatalf("status.mcpServer = %+v, want the last good list kept", e.Status.MCPServer)
	}
}
