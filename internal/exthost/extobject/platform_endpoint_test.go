package extobject

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// A platform Extension's webhook hook, tool Service or MCP Service is
// refused, at load (the Workspace's reason) and at validation (the
// Extension's Valid condition), unless it is HTTPS with a caBundle: hostd
// calls it from inside the agent's pod, where the agent can make the name
// resolve to a listener of its own. The same Extension in a
// tenant's namespace keeps plain HTTP, declared: redirecting its own
// Services fools only the tenant. Over HTTPS with a caBundle a platform
// Extension loads.
func TestPlatformEndpoint_PlainHTTPOrNoCABundleIsRefusedForAPlatformExtension(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nplatform\n-----END CERTIFICATE-----\n")
	webhook := func(ref v1alpha1.ServiceReference) *v1alpha1.Extension {
		ext := reviewExtension()
		ext.Namespace = "loadout-system"
		ext.Spec.Hooks[0].CEL = nil
		ext.Spec.Hooks[0].Webhook = &v1alpha1.WebhookHook{Service: ref}
		return ext
	}
	tool := func(ref v1alpha1.ServiceReference) *v1alpha1.Extension {
		ext := reviewExtension()
		ext.Namespace = "loadout-system"
		ext.Spec.Tools[0].Implementation = &v1alpha1.ToolImplementation{Service: ref}
		return ext
	}
	mcp := func(ref v1alpha1.MCPServiceReference) *v1alpha1.Extension {
		return &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "loadout-system", Name: "everything"},
			Spec: v1alpha1.ExtensionSpec{MCPServer: &v1alpha1.MCPServer{Service: &ref,
				Tools: v1alpha1.MCPToolSelection{Allow: []string{"echo"}, Prefix: "ev_"}}}}
	}
	for _, tc := range []struct {
		what  string
		ext   *v1alpha1.Extension
		field string
	}{
		{"webhook hook over plain HTTP (guard.loadout-system.svc)", webhook(v1alpha1.ServiceReference{Name: "guard", Port: 80, Path: "/check", Scheme: v1alpha1.SchemeHTTP}),
			"spec.hooks[0].webhook.service.scheme"},
		{"webhook hook over HTTPS without a caBundle", webhook(v1alpha1.ServiceReference{Name: "guard", Port: 443, Path: "/check"}),
			"spec.hooks[0].webhook.service.caBundle"},
		{"tool Service over plain HTTP", tool(v1alpha1.ServiceReference{Name: "notes", Port: 8080, Scheme: v1alpha1.SchemeHTTP}),
			"spec.tools[0].implementation.service.scheme"},
		{"tool Service over HTTPS without a caBundle", tool(v1alpha1.ServiceReference{Name: "notes", Port: 8443}),
			"spec.tools[0].implementation.service.caBundle"},
		{"MCP Service over plain HTTP", mcp(v1alpha1.MCPServiceReference{Name: "everything", Port: 3001, Scheme: v1alpha1.SchemeHTTP}),
			"spec.mcpServer.service.scheme"},
	} {
		out := newTestHost().Load(context.Background(), FromObjectIn(tc.ext, nil, true), true)
		if out.Reason != exthost.ReasonInvalid || !strings.Contains(out.Message, tc.field) || !strings.Contains(out.Message, "HTTPS with a caBundle") {
			t.Errorf("%s: load outcome %s %s: %s, want %s naming %s and HTTPS with a caBundle", tc.what, out.State, out.Reason, out.Message, exthost.ReasonInvalid, tc.field)
		}
		if errs := fmt.Sprint(ValidatePlatformObject(tc.ext)); !strings.Contains(errs, tc.field) {
			t.Errorf("%s: validation %s, want an error naming %s", tc.what, errs, tc.field)
		}
		if errs := ValidateObject(tc.ext); len(errs) != 0 {
			t.Errorf("%s: the same spec of a tenant's namespace: %v, want valid", tc.what, errs)
		}
	}

	tenant := webhook(v1alpha1.ServiceReference{Name: "guard", Port: 80, Path: "/check", Scheme: v1alpha1.SchemeHTTP})
	tenant.Namespace = "team-a"
	mustLoad(t, newTestHost(), FromObjectIn(tenant, nil, false))

	h := newTestHost()
	mustLoad(t, h, FromObjectIn(webhook(v1alpha1.ServiceReference{Name: "guard", Port: 443, Path: "/check", CABundle: ca}), nil, true))
	if w := h.Registry().Hooks[0].Webhook; w.URL != "https://guard.loadout-system.svc:443/check" || string(w.CABundle) != string(ca) {
		t.Fatalf("published webhook %+v, want the platform's HTTPS URL with its caBundle", w)
	}
	if out := newTestHost().Load(context.Background(), FromObjectIn(tool(v1alpha1.ServiceReference{Name: "notes", Port: 8443, CABundle: ca}), nil, true), true); out.State != vocab.ExtensionLoaded {
		t.Fatalf("a platform tool Service over HTTPS with a caBundle: %s %s: %s", out.State, out.Reason, out.Message)
	}
}
