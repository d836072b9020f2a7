package exthost

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// The CRD cannot compile JSON Schema, so the Extension's Valid condition does:
// a schema that does not compile is reported with its field path and the
// schema library's reason.
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

// The library's default loader reads file:// references; a schema that could
// make the manager or hostd read a file (or fetch a URL) is refused instead.
func TestCompileInputSchema_ReferencesOutsideTheDocumentRefused(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/s.json", "other.json"} {
		_, err := CompileInputSchema([]byte(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`))
		if err == nil || !strings.Contains(err.Error(), "only references within the inputSchema document are allowed") {
			t.Errorf("$ref %s: %v", ref, err)
		}
	}
	s, err := CompileInputSchema([]byte(`{"type":"object","$defs":{"t":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/t"}}}`))
	if err != nil {
		t.Fatalf("local $ref: %v", err)
	}
	if err := s.Validate(map[string]any{"a": 1.0}); err == nil || !strings.Contains(err.Error(), "at '/a': got number, want string") {
		t.Fatalf("local $ref not applied: %v", err)
	}
}

// Draft 2020-12 is the default: prefixItems is its keyword (draft 7 would
// ignore it).
func TestCompileInputSchema_Draft2020ByDefault(t *testing.T) {
	s, err := CompileInputSchema([]byte(`{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"integer"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"p": []any{"x"}}); err == nil {
		t.Fatal("prefixItems ignored: not draft 2020-12")
	}
}

// A tool's implementation is resolved with the webhook resolver, in the
// extension's own namespace, and travels through the published registry to
// hostd unchanged.
func TestFromObject_ImplementationResolvedLikeAWebhookAndPublished(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Tools[0].Implementation = &v1alpha1.ToolImplementation{Service: v1alpha1.ServiceReference{Name: "review-notes", Port: 8080, Path: "/notes"}}
	h := newTestHost()
	mustLoad(t, h, FromObject(ext, nil))
	tool := h.Registry().Tools[0]
	if !tool.Runnable() || tool.Service.URL != "https://review-notes.team-a.svc:8080/notes" || tool.Service.TimeoutSeconds != 30 {
		t.Fatalf("published tool %+v service %+v", tool, tool.Service)
	}
	agent, outcomes := NewHostFromRegistry(context.Background(), h.Registry(), testWorkspace, nil)
	if outcomes[0].State != vocab.ExtensionLoaded || jsonOf(t, agent.Registry()) != jsonOf(t, h.Registry()) {
		t.Fatalf("round trip lost the implementation: %+v\n%s", outcomes, jsonOf(t, agent.Registry()))
	}

	ext.Spec.Tools[0].Implementation.Service.Name = "169.254.169.254/x?"
	ext.Spec.Tools[0].Implementation.TimeoutSeconds = 301
	errs := ValidateObject(ext)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "spec.tools[0].implementation.timeoutSeconds") ||
		!strings.Contains(errs[1].Error(), "spec.tools[0].implementation.service") {
		t.Fatalf("bad implementation: %v", errs)
	}
}
