package extobject

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

func FuzzDecodeManifest(f *testing.F) {
	f.Add(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`)
	f.Add(`{"hooks":[{"name":"h","event":"BeforeToolCall","cel":{"expression":"true"}}]}`)
	f.Add(`{"hoooks":[]}`)
	f.Add(`{} {}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, body string) {
		spec, err := DecodeManifest([]byte(body))
		if err != nil {
			return
		}
		// Whatever decodes must compile to a verdict without panicking, and
		// every webhook it compiles calls a Service of the extension's own
		// namespace: the manifest never passed the API schema.
		h := newTestHost()
		src := exthost.Source{ID: "fuzz", Namespace: "ns", Import: func(context.Context, exthost.Env) (exthost.Factory, error) {
			return specFactory(spec, specContext{extension: "fuzz", namespace: "ns", resolve: DefaultResolver}), nil
		}}
		if out := h.Load(context.Background(), src, true); out.State != vocab.ExtensionLoaded {
			return
		}
		for _, hook := range h.Registry().Hooks {
			if hook.Webhook == nil {
				continue
			}
			u, err := url.Parse(hook.Webhook.URL)
			if err != nil || u.User != nil || !strings.HasSuffix(u.Hostname(), ".ns.svc") || strings.Count(u.Hostname(), ".") != 2 {
				t.Fatalf("webhook %q calls %q, outside namespace ns", hook.Name, hook.Webhook.URL)
			}
		}
	})
}
