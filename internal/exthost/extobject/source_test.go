package extobject

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// reviewExtension is the extension of the fixed example (docs/rules.md).
func reviewExtension() *v1alpha1.Extension {
	return &v1alpha1.Extension{
		ObjectMeta: metav1.ObjectMeta{Name: "review-extension", Namespace: "team-a"},
		Spec: v1alpha1.ExtensionSpec{
			PromptGuide: "Use review_note to leave review notes.",
			Tools: []v1alpha1.ExtensionTool{{
				Name: "review_note", Description: "Leave a review note",
				InputSchema: &runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
			}},
			Hooks: []v1alpha1.ExtensionHook{
				{Name: "no-secrets", Event: vocab.BeforeToolCall, Match: &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"review_note"}},
					CEL: &v1alpha1.CELHook{Expression: "!has(call.arguments.text) || !call.arguments.text.contains('SECRET')", Message: "notes must not contain secrets"}},
				{Name: "observe", Event: vocab.AfterToolResult, CEL: &v1alpha1.CELHook{Expression: "!result.isError"}},
			},
			MessageTypes: []v1alpha1.MessageType{{Type: "review/note", InContext: true}},
		},
	}
}

// The fixed example of the fixed example (docs/rules.md): an ordinary note runs the core once; a secret
// note adds no core call and gets a result paired with its own id and name.
func TestFixedExample_ReviewExtension_S9(t *testing.T) {
	h := newTestHost("read", "bash")
	out := h.Load(context.Background(), FromObject(reviewExtension(), nil), true)
	if out.State != vocab.ExtensionLoaded || out.Namespace != "team-a" || strings.Join(out.Tools, ",") != "review_note" {
		t.Fatalf("outcome %+v", out)
	}
	core := &coreCounter{}
	r, d := h.Execute(context.Background(), call("note-1", "review_note", "looks good"), core.run)
	if r.IsError || core.calls.Load() != 1 || len(d) != 0 || r.ToolCallID != "note-1" {
		t.Fatalf("ordinary note: %+v %+v core %d", r, d, core.calls.Load())
	}
	secret := call("note-2", "review_note", "the SECRET is 42")
	r, d = h.Execute(context.Background(), secret, core.run)
	if core.calls.Load() != 1 {
		t.Fatalf("secret note reached the core")
	}
	assertPaired(t, secret, r)
	if r.Content[0].Text != "notes must not contain secrets" || len(d) != 0 {
		t.Fatalf("secret note: %+v %+v", r, d)
	}
	reg := h.Registry()
	if len(reg.Tools) != 3 || reg.Tools[2].Extension != "review-extension" || len(reg.Hooks) != 2 ||
		reg.MessageTypes[0].Type != "review/note" || reg.PromptGuides[0].Text == "" {
		t.Fatalf("registry %+v", reg)
	}
}

func TestFromObject_InvalidRejectsWholeExtension(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*v1alpha1.Extension)
		want   string
	}{
		{"cel compile error", func(e *v1alpha1.Extension) { e.Spec.Hooks[1].CEL.Expression = "result.isError &&" }, "spec.hooks[1].cel.expression"},
		{"schema not object", func(e *v1alpha1.Extension) { e.Spec.Tools[0].InputSchema.Raw = []byte(`{"type":"string"}`) }, "spec.tools[0].inputSchema"},
		{"schema not json object", func(e *v1alpha1.Extension) { e.Spec.Tools[0].InputSchema.Raw = []byte(`[1]`) }, "spec.tools[0].inputSchema"},
		{"both cel and webhook", func(e *v1alpha1.Extension) {
			e.Spec.Hooks[0].Webhook = &v1alpha1.WebhookHook{Service: v1alpha1.ServiceReference{Name: "svc"}}
		}, "spec.hooks[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ext := reviewExtension()
			tt.mutate(ext)
			errs := ValidateObject(ext)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("ValidateObject = %v, want path %s", errs, tt.want)
			}
			h := newTestHost()
			before := h.Registry()
			out := h.Load(context.Background(), FromObject(ext, nil), true)
			if out.State != vocab.ExtensionRejected || out.Reason != exthost.ReasonInvalid || !strings.Contains(out.Message, tt.want) {
				t.Fatalf("outcome %+v", out)
			}
			if !reflect.DeepEqual(h.Registry(), before) {
				t.Fatal("a rejected extension left registrations behind")
			}
		})
	}
	if errs := ValidateObject(reviewExtension()); len(errs) != 0 {
		t.Fatalf("valid extension: %v", errs)
	}
}

// A type error in a hook (turn.toolCalls is an int) fails validation naming
// the field, the expression and the type; the right expression passes.
func TestValidateObject_CELTypeErrorNamesFieldExpressionAndType(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks = append(ext.Spec.Hooks, v1alpha1.ExtensionHook{Name: "busy-turn", Event: vocab.TurnEnd,
		CEL: &v1alpha1.CELHook{Expression: "size(turn.toolCalls) > 3"}})
	i := len(ext.Spec.Hooks) - 1
	errs := ValidateObject(ext)
	if len(errs) != 1 {
		t.Fatalf("ValidateObject = %v, want one error", errs)
	}
	for _, want := range []string{fmt.Sprintf("spec.hooks[%d].cel.expression", i), `"size(turn.toolCalls) > 3"`, "applied to '(int)'"} {
		if !strings.Contains(errs[0].Error(), want) {
			t.Fatalf("error %q does not name %s", errs[0], want)
		}
	}
	ext.Spec.Hooks[i].CEL.Expression = "turn.toolCalls > 3"
	if errs := ValidateObject(ext); len(errs) != 0 {
		t.Fatalf("valid expression refused: %v", errs)
	}
}

func TestFromObject_WebhookURLsStayInOwnNamespace(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks[0].CEL = nil
	ext.Spec.Hooks[0].Webhook = &v1alpha1.WebhookHook{Service: v1alpha1.ServiceReference{Name: "policy", Port: 8443, Path: "/check"}}
	h := newTestHost()
	mustLoad(t, h, FromObject(ext, nil))
	if got := h.Registry().Hooks[0].Webhook.URL; got != "https://policy.team-a.svc:8443/check" {
		t.Fatalf("webhook url %q", got)
	}
	var seen []string
	custom := func(ns string, ref v1alpha1.ServiceReference) (string, error) {
		seen = append(seen, ns)
		return DefaultResolver(ns, ref)
	}
	mustLoad(t, newTestHost(), FromObject(ext, custom))
	if strings.Join(seen, ",") != "team-a" {
		t.Fatalf("resolver asked for namespaces %v", seen)
	}
	if _, err := DefaultResolver("team-a", v1alpha1.ServiceReference{Name: "p", Path: "/a/../b"}); err == nil {
		t.Fatal("a '..' path was resolved")
	}
}

// serviceBacked returns an Extension whose manifest a test server serves, the
// server's hit counter and a resolver that sends the Service there.
func serviceBacked(t *testing.T, manifest string) (*v1alpha1.Extension, *atomic.Int32, WebhookResolver) {
	t.Helper()
	var hits atomic.Int32
	srv := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/manifest.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(manifest))
	})
	u, _ := url.Parse(srv.URL)
	resolve := func(ns string, ref v1alpha1.ServiceReference) (string, error) {
		if ns != "team-a" {
			t.Errorf("resolved a Service in namespace %q", ns)
		}
		return "http://" + u.Host + ref.Path, nil
	}
	ext := &v1alpha1.Extension{
		ObjectMeta: metav1.ObjectMeta{Name: "remote-ext", Namespace: "team-a"},
		Spec: v1alpha1.ExtensionSpec{Source: &v1alpha1.ExtensionSource{
			Service: v1alpha1.ServiceReference{Name: "remote", Port: 80, Path: "/manifest.json"}}},
	}
	return ext, &hits, resolve
}

func TestServiceBacked_UntrustedIsNeverContacted_REXT1(t *testing.T) {
	ext, hits, resolve := serviceBacked(t, `{"tools":[{"name":"remote_tool","description":"d"}]}`)
	h := newTestHost()
	out := h.Load(context.Background(), FromObject(ext, resolve), false)
	if out.State != vocab.ExtensionSkippedUntrusted || hits.Load() != 0 {
		t.Fatalf("outcome %+v, endpoint hits %d", out, hits.Load())
	}
	if errs := ValidateObject(ext); len(errs) != 0 || hits.Load() != 0 {
		t.Fatalf("validation contacted the service or failed: %v hits %d", errs, hits.Load())
	}
}

func TestServiceBacked_TrustedFetchesManifest_REXT1(t *testing.T) {
	m, _ := json.Marshal(map[string]any{
		"promptGuide": "remote guide",
		"tools":       []any{map[string]any{"name": "remote_tool", "description": "d", "inputSchema": map[string]any{"type": "object"}}},
		"hooks": []any{map[string]any{"name": "deny-rm", "event": "BeforeToolCall",
			"cel": map[string]any{"expression": "call.name != 'rm'", "message": "no rm"}}},
	})
	ext, hits, resolve := serviceBacked(t, string(m))
	h := newTestHost("rm")
	out := h.Load(context.Background(), FromObject(ext, resolve), true)
	if out.State != vocab.ExtensionLoaded || hits.Load() != 1 || strings.Join(out.Tools, ",") != "remote_tool" {
		t.Fatalf("outcome %+v hits %d", out, hits.Load())
	}
	r, _ := h.Execute(context.Background(), call("1", "rm", ""), (&coreCounter{}).run)
	if !r.IsError || r.Content[0].Text != "no rm" {
		t.Fatalf("remote hook not active: %+v", r)
	}
}

func TestServiceBacked_BadManifestRejects(t *testing.T) {
	for _, tt := range []struct{ name, manifest, reason, want string }{
		{"unknown field", `{"tools":[],"hoooks":[]}`, exthost.ReasonInvalid, "unknown field"},
		{"garbage", `<html>`, exthost.ReasonInvalid, "manifest"},
		{"other name", `{"name":"someone-else"}`, exthost.ReasonInvalid, "someone-else"},
		{"points elsewhere", `{"source":{"service":{"name":"x"}}}`, exthost.ReasonInvalid, "source"},
		{"bad cel", `{"hooks":[{"name":"h","event":"BeforeToolCall","cel":{"expression":"call.("}}]}`, exthost.ReasonInvalid, "spec.hooks[0].cel.expression"},
		{"bad tool name", `{"tools":[{"name":"no spaces","description":"d"}]}`, exthost.ReasonInvalid, "spec.tools[0].name"},
		{"bad event", `{"hooks":[{"name":"h","event":"Whenever","cel":{"expression":"true"}}]}`, exthost.ReasonInvalid, "spec.hooks[0].event"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ext, _, resolve := serviceBacked(t, tt.manifest)
			out := newTestHost().Load(context.Background(), FromObject(ext, resolve), true)
			if out.State != vocab.ExtensionRejected || out.Reason != tt.reason || !strings.Contains(out.Message, tt.want) {
				t.Fatalf("outcome %+v", out)
			}
		})
	}
	ext, _, resolve := serviceBacked(t, "{}")
	ext.Spec.Source.Service.Path = "/missing"
	if out := newTestHost().Load(context.Background(), FromObject(ext, resolve), true); out.Reason != exthost.ReasonImportFailed || !strings.Contains(out.Message, "404") {
		t.Fatalf("outcome %+v", out)
	}
}

// TestServiceBacked_ManifestRedirectIsNotFollowed: a manifest Service that
// redirects to a metadata endpoint gets ImportFailed naming the status; the
// endpoint's JSON never reaches the outcome's message.
func TestServiceBacked_ManifestRedirectIsNotFollowed(t *testing.T) {
	srv := testnet.RedirectToMetadata(t, `{"AccessKeyId":"AKIA-LEAKED"}`)
	ext, _, _ := serviceBacked(t, `{}`)
	resolve := func(string, v1alpha1.ServiceReference) (string, error) { return srv.URL + "/manifest.json", nil }
	out := newTestHost().Load(context.Background(), FromObject(ext, resolve), true)
	if out.State != vocab.ExtensionRejected || out.Reason != exthost.ReasonImportFailed || srv.Contacted() ||
		strings.Contains(out.Message, "AKIA") || !strings.Contains(out.Message, "redirects are not followed") {
		t.Fatalf("outcome %+v (metadata contacted: %v)", out, srv.Contacted())
	}
}
