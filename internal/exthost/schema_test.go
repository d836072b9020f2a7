package exthost

import (
	"strings"
	"testing"
)

// The CRD cannot compile JSON Schema, so the Extension's Valid condition does:
// a schema that does not compile is reported with its field path and the
// schema library's reason.
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
