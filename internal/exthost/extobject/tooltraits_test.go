package extobject_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
)

// R-TL-1: a tool description that points at the tool ("this tool", "use
// this") is refused, naming the field; one that says what the tool does is
// not. Admission's rule (the ExtensionTool marker) is the same pattern; the
// crdvalidation suite proves the API server's side.
func TestToolDescription_RefusedWhenItPointsAtTheTool(t *testing.T) {
	for desc, refused := range map[string]bool{
		"Use this tool to record a review note.": true,
		"This tool records a review note.":       true,
		"records notes; call this\nwhen done":    true,
		"Invoke me for notes":                    true,
		"THAT  TOOL is for notes":                true,
		"Record a review note.":                  false,
		"Record a note; use the toolbox schema.": false,
		"Summarise this tooling's output":        false,
		"Runs the linter on this file":           false,
	} {
		ext := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "notes"},
			Spec: v1alpha1.ExtensionSpec{Tools: []v1alpha1.ExtensionTool{{Name: "review_note", Description: v1alpha1.Description(desc)}}}}
		errs := extobject.ValidateObject(ext)
		got := len(errs) > 0 && strings.Contains(errs[0].Error(), "spec.tools[0].description") && strings.Contains(errs[0].Error(), "never 'this tool' or 'use this'")
		if got != refused || (!refused && len(errs) > 0) {
			t.Errorf("%q: errors %v, want refused=%v", desc, errs, refused)
		}
	}
}

// R-TL-2, R-TL-3, R-TL-4: a declared tool's and an MCP server's tools'
// hints, output limit and execution mode reach the published registry.
func TestToolTraits_Published(t *testing.T) {
	yes := true
	ext := mcpExtension()
	ext.Spec.MCPServer.Output = &v1alpha1.ToolOutput{MaxBytes: 2048, OnOverflow: v1alpha1.OutputRefuse}
	ext.Spec.MCPServer.ExecutionMode = v1alpha1.ExecutionSerial
	ext.Status.MCPServer.Tools[0].Annotations = &v1alpha1.MCPToolAnnotations{DestructiveHint: &yes, IdempotentHint: true}
	ext.Spec.Tools = []v1alpha1.ExtensionTool{{Name: "review_note", Description: "Record a review note.", OpenWorld: &yes,
		Output: &v1alpha1.ToolOutput{MaxBytes: 4096}}}
	h := exthost.NewHost(exthost.Options{})
	if out := h.Load(context.Background(), extobject.FromObjectIn(ext, nil, false), true); out.Reason != "" {
		t.Fatalf("load: %+v", out)
	}
	got := map[string]string{}
	for _, tool := range h.Registry().Tools {
		b, _ := json.Marshal(tool.ToolTraits)
		got[tool.Name] = string(b)
	}
	if want := `{"destructive":true,"idempotent":true,"output":{"maxBytes":2048,"onOverflow":"refuse"},"executionMode":"serial"}`; got["ev_echo"] != want {
		t.Errorf("ev_echo traits = %s, want %s", got["ev_echo"], want)
	}
	if want := `{"openWorld":true,"output":{"maxBytes":4096,"onOverflow":"truncate"}}`; got["review_note"] != want {
		t.Errorf("review_note traits = %s, want %s", got["review_note"], want)
	}
}
