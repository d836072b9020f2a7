package extobject

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

func TestValidateObject_InputSchemaThatDoesNotCompileNamesFieldAndReason(t *testing.T) {
	for _, tt := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"text":{"type":"strin"}}}`, "at '/properties/text/type': value must be one of"},
		{`{"type":"object","properties":{"text":{"pattern":"(("}}}`, "is not valid regex"},
		{`{"type":"object","minProperties":-1}`, "at '/minProperties': minimum: got -1, want 0"},
		{`{"type":"string"}`, `must have "type": "object"`},
		{`[1]`, "must be a JSON object"},
	} {
		ext := reviewExtension()
		ext.Spec.Tools[0].InputSchema = &runtime.RawExtension{Raw: []byte(tt.schema)}
		errs := ValidateObject(ext)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.tools[0].inputSchema") || !strings.Contains(errs[0].Error(), tt.want) {
			t.Errorf("schema %s: %v, want spec.tools[0].inputSchema and %q", tt.schema, errs, tt.want)
		}
	}
}

func TestFromObject_ImplementationResolvedLikeAWebhookAndPublished(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Tools[0].Implementation = &v1alpha1.ToolImplementation{Service: v1alpha1.ServiceReference{Name: "review-notes", Port: 8080, Path: "/notes"}}
	h := newTestHost()
	mustLoad(t, h, FromObject(ext, nil))
	tool := h.Registry().Tools[0]
	if !tool.Runnable() || tool.Service.URL != "https://review-notes.team-a.svc:8080/notes" || tool.Service.TimeoutSeconds != 30 {
		t.Fatalf("published tool %+v service %+v", tool, tool.Service)
	}
	agent, outcomes := exthost.NewHostFromRegistry(context.Background(), h.Registry(), testWorkspace, nil)
	if outcomes[0].State != vocab.ExtensionLoaded || !reflect.DeepEqual(agent.Registry(), h.Registry()) {
		t.Fatalf("round trip lost the implementation: %+v\n%+v", outcomes, agent.Registry())
	}

	ext.Spec.Tools[0].Implementation.Service.Name = "169.254.169.254/x?"
	ext.Spec.Tools[0].Implementation.TimeoutSeconds = 301
	errs := ValidateObject(ext)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "spec.tools[0].implementation.timeoutSeconds") ||
		!strings.Contains(errs[1].Error(), "spec.tools[0].implementation.service") {
		t.Fatalf("bad implementation: %v", errs)
	}
}
