package mcptools

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestEpoch_PlatformMCPServerDiscoveredLateMovesTheEpochAtOnce: a platform
// Extension whose MCP server answers only after the Extension exists
// (created beside it, as `make demo` and a GitOps sync do) leaves the
// platform's policy unloadable until the manager discovers its tools. The
// discovery must move the namespace's policy epoch then, not the epoch
// reconciler's retry 30 seconds later: until the epoch names the new
// digest, hostd refuses the Workspace's new context as stale and
// admission refuses a namespace's first agent pods (R-EXT-6).
func TestEpoch_PlatformMCPServerDiscoveredLateMovesTheEpochAtOnce(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, workspaceIn(ns))
	first := epochPolicy(t, ns, "")

	var up atomic.Bool
	srv := tlsMCPServer(t, &up)
	// Its hook names the server's tool, which exists once discovered.
	hook := testenv.CELHook("no-secrets", vocab.BeforeToolCall, "!call.arguments.message.contains('SECRET')")
	hook.Match = &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"late_echo"}}
	ext := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: "late-" + ns},
		Spec: v1alpha1.ExtensionSpec{
			Hooks:             []v1alpha1.ExtensionHook{hook},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			MCPServer: &v1alpha1.MCPServer{URL: srv.url, CABundle: srv.ca,
				Tools: v1alpha1.MCPToolSelection{Allow: []string{"echo"}, Prefix: "late_"}},
		}}
	kit.Create(t, ext)
	t.Cleanup(func() { _ = kit.Client.Delete(context.Background(), ext) })
	// The epoch reconciler sees the Extension while its server is down.
	waitFailedDiscovery(t, ext)

	up.Store(true)
	waitDiscovered(t, platformNS, ext.Name)
	discovered := time.Now()
	testenv.Eventually(t, 10*time.Second, func() error {
		cm := &corev1.ConfigMap{}
		if err := kit.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: contract.EpochConfigMap}, cm); err != nil {
			return err
		}
		if cm.Annotations[controllers.EpochPolicyAnnotation] == first {
			return fmt.Errorf("the epoch still names %s %s after the discovery", first, time.Since(discovered).Round(time.Second))
		}
		return nil
	})
}

// epochPolicy waits for ns's epoch to name a policy other than not, and
// returns it.
func epochPolicy(t *testing.T, ns, not string) string {
	t.Helper()
	var got string
	kit.Eventually(t, func() error {
		cm := &corev1.ConfigMap{}
		if err := kit.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: contract.EpochConfigMap}, cm); err != nil {
			return err
		}
		if got = cm.Annotations[controllers.EpochPolicyAnnotation]; got == "" || got == not {
			return errors.New("no new epoch yet")
		}
		return nil
	})
	return got
}

// waitFailedDiscovery waits until the manager has tried ext's server and
// recorded the failure.
func waitFailedDiscovery(t *testing.T, ext *v1alpha1.Extension) {
	t.Helper()
	kit.Eventually(t, func() error {
		got := &v1alpha1.Extension{}
		if err := kit.Client.Get(context.Background(), client.ObjectKeyFromObject(ext), got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == string(vocab.ConditionToolsDiscovered) && c.Status == metav1.ConditionFalse {
				return nil
			}
		}
		return errors.New("no failed discovery yet")
	})
}

type tlsServer struct {
	url string
	ca  []byte
}

// tlsMCPServer serves one tool, echo, over HTTPS; it answers 503 until up.
func tlsMCPServer(t *testing.T, up *atomic.Bool) tlsServer {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Message string `json:"message"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return tlsServer{url: srv.URL + "/mcp", ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
}
