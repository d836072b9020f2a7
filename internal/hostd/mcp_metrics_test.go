package hostd

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/mcpskills"
)

// Every MCP request is counted by one middleware under its method, with a
// code saying how it ended; a method hostd does not know is counted as
// "other", whatever string the client sent.
func TestMCPMetrics_EveryMethodCountedWithItsOutcome(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	session := connectMCP(t, ts.URL, nil)
	callMCP(t, session, "review_note", map[string]any{"text": "fine"})
	callMCP(t, session, "review_note", map[string]any{"text": "SECRET"}) // blocked: a tool error
	if _, err := session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://nope/SKILL.md"}); err == nil {
		t.Fatal("read of an unknown skill succeeded")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "made-up", Version: "v0"}, nil)
	var madeUp []string
	for i := range 3 {
		madeUp = append(madeUp, "made/up-"+strings.Repeat("x", i))
		if err := mcp.AddSendingCustomMethod[*mcpskills.GetParams, *mcpskills.GetResult](client, madeUp[i]); err != nil {
			t.Fatal(err)
		}
	}
	other, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, method := range madeUp {
		if _, err := mcp.CallCustomMethod[*mcpskills.GetParams, *mcpskills.GetResult](t.Context(), other, method, &mcpskills.GetParams{}); err == nil {
			t.Fatalf("%s answered", method)
		}
	}
	metrics := get(t, ts.URL+"/metrics")
	for _, want := range []string{
		`loadout_hostd_requests_total{code="ok",endpoint="mcp tools/call"} 1`,
		`loadout_hostd_requests_total{code="tool_error",endpoint="mcp tools/call"} 1`,
		`loadout_hostd_requests_total{code="-32602",endpoint="mcp resources/read"} 1`,
		`loadout_hostd_request_duration_seconds_count{endpoint="mcp tools/call"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, "made/up") {
		t.Error("a method the client made up became a label")
	}
}
