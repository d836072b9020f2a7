package hostd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// prompts/list is the context's templates with their variables as required
// arguments; prompts/get renders exactly what /v1/render renders, and a
// missing variable is an error, not a half-filled prompt.
func TestMCP_PromptsAreTheTemplatesRenderedLikeV1Render(t *testing.T) { // R-TPL-2, R-TPL-3
	_, ts, _ := newTestServer(t, fixedRegistry())
	session := connectMCP(t, ts.URL, nil)
	list, err := session.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 {
		t.Fatalf("prompts/list = %+v, want the one template", list.Prompts)
	}
	p := list.Prompts[0]
	if p.Name != "review" || len(p.Arguments) != 2 || p.Arguments[0].Name != "file" || !p.Arguments[0].Required ||
		p.Arguments[1].Name != "owner" || !p.Arguments[1].Required {
		t.Fatalf("prompt %+v, want review(file, owner) both required", p)
	}
	args := map[string]string{"file": "a.go", "owner": "bob"}
	got, err := session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var rendered struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if code := post(t, ts.URL+"/v1/render", map[string]any{"template": "review", "args": args}, &rendered); code != http.StatusOK {
		t.Fatalf("/v1/render: %d", code)
	}
	if len(got.Messages) != 1 || got.Messages[0].Role != mcp.Role(rendered.Role) {
		t.Fatalf("prompts/get messages %+v", got.Messages)
	}
	if text := got.Messages[0].Content.(*mcp.TextContent).Text; text != rendered.Content[0].Text || text != "Review a.go for bob. Focus on a.go." {
		t.Errorf("prompts/get text %q, /v1/render %q", text, rendered.Content[0].Text)
	}
	_, err = session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"file": "a.go"}})
	if err == nil || !strings.Contains(err.Error(), "owner") {
		t.Errorf("a missing variable: %v, want an error naming it", err)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "{{") {
		t.Errorf("placeholders left in %s", b)
	}
}
