package hostd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
)

// serveCommand serves the fixed context with a command template "ship": a
// review_note tool step, then its own body.
func serveCommand(t *testing.T) *httptest.Server {
	t.Helper()
	data := contextData(t, fixedRegistry())
	doc := contract.Templates{Templates: []contract.TemplateDoc{{Name: "ship", Origin: "project", Body: "Ship {{branch}}.", Variables: []string{"note", "branch"},
		Steps: []contract.TemplateStep{{Tool: "review_note", Arguments: json.RawMessage(`{"text":"{{note}}"}`)}, {Render: true}}}}}
	_, ts, _ := serveContext(t, withKey(t, data, contract.KeyTemplates, doc), Options{Now: func() time.Time { return time.UnixMilli(42) }})
	return ts
}

// hostd renders a command's template part only and says its tool steps are
// not run; /v1/render returns the plan for an agent that runs them.
func TestRender_CommandStepsArePlannedNotRun(t *testing.T) { // R-TPL-5
	ts := serveCommand(t)
	args := map[string]string{"note": "LGTM", "branch": "main"}
	var out resources.RenderedCommand
	if code := post(t, ts.URL+"/v1/render", map[string]any{"template": "ship", "args": args}, &out); code != http.StatusOK {
		t.Fatalf("/v1/render: %d", code)
	}
	if out.Content[0].Text != "Ship main." || out.Note != resources.StepsNotRun {
		t.Fatalf("render = %+v", out)
	}
	if len(out.Steps) != 2 || out.Steps[0].Tool != "review_note" || string(out.Steps[0].Arguments) != `{"text":"LGTM"}` || out.Steps[1].Text != "Ship main." {
		t.Fatalf("plan = %+v", out.Steps)
	}
	session := connectMCP(t, ts.URL, nil)
	got, err := session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "ship", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Description, "they are not run here") || got.Messages[0].Content.(*mcp.TextContent).Text != "Ship main." {
		t.Fatalf("prompts/get = %+v", got)
	}
	if _, err := session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "ship", Arguments: map[string]string{"branch": "main"}}); err == nil || !strings.Contains(err.Error(), `"note"`) {
		t.Fatalf("a variable only the tool step uses is still required: %v", err)
	}
}
