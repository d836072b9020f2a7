package hostd

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// connectMCP connects the SDK's own client to hostd's MCP endpoint. changed,
// if not nil, receives tools/list_changed notifications.
func connectMCP(t testing.TB, base string, changed chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "loadout-test", Version: "v0"}, opts)
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

func listMCP(t *testing.T, session *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func callMCP(t *testing.T, session *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res, strings.Join(text, "\n")
}

// tools/list is the registry's runnable tools, with their names, descriptions
// and input schemas; declarations and denied tools are not listed. (MCP lists
// tools by name; the registry is in registration order.)
func TestMCP_ToolsListEqualsTheRunnableRegistry(t *testing.T) {
	svc := newToolService(t, recordNote)
	reg := runnableRegistry(svc.URL, 5)
	reg.Tools = append(reg.Tools,
		contract.Tool{Name: "declared_only", Description: "Runs in the agent", Extension: "review-extension"},
		contract.Tool{Name: "lookup", Description: "Look something up", Extension: "review-extension", ReadOnly: true,
			Service: &contract.ToolService{URL: svc.URL, TimeoutSeconds: 5}})
	s, ts, _ := newTestServer(t, reg)
	tools := listMCP(t, connectMCP(t, ts.URL, nil))

	var want []contract.Tool
	for _, tool := range s.current.Load().host.Registry().Tools {
		if tool.Runnable() {
			want = append(want, tool)
		}
	}
	slices.SortFunc(want, func(a, b contract.Tool) int { return strings.Compare(a.Name, b.Name) })
	if len(tools) != len(want) || len(want) != 2 {
		t.Fatalf("tools/list has %d tools, the registry %d runnable", len(tools), len(want))
	}
	for i, tool := range tools {
		schema, _ := json.Marshal(tool.InputSchema)
		wantSchema := string(want[i].InputSchema)
		if len(want[i].InputSchema) == 0 {
			wantSchema = `{"type":"object"}`
		}
		if tool.Name != want[i].Name || tool.Description != want[i].Description || !jsonEqual(t, string(schema), wantSchema) {
			t.Errorf("tool %d: %s %q %s, want %s %q %s", i, tool.Name, tool.Description, schema, want[i].Name, want[i].Description, wantSchema)
		}
	}
	if tools[0].Name != "lookup" || tools[0].Annotations == nil || !tools[0].Annotations.ReadOnlyHint {
		t.Errorf("readOnly not carried to MCP: %+v", tools[0].Annotations)
	}
}

// tools/call goes through the same path as /v1/tools/{name}: the same hook
// denies a secret note before it reaches the Service, the schema rejects bad
// arguments, and an allowed note runs the Service once.
func TestMCP_ToolsCallDeniedByTheSameHookAndNeverReachesTheService(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, ts, _ := newTestServer(t, runnableRegistry(svc.URL, 5))
	session := connectMCP(t, ts.URL, nil)

	res, text := callMCP(t, session, "review_note", map[string]any{"text": "the SECRET is 42"})
	if !res.IsError || text != "notes must not contain secrets" || res.Meta["loadout.dev/executed"] != false {
		t.Fatalf("secret note over MCP: %+v %q", res, text)
	}
	res, text = callMCP(t, session, "review_note", map[string]any{"text": 7})
	if !res.IsError || !strings.Contains(text, "at '/text': got number, want string") {
		t.Fatalf("invalid arguments over MCP: %+v %q", res, text)
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("denied or invalid MCP calls reached the service %d times", n)
	}
	res, text = callMCP(t, session, "review_note", map[string]any{"text": "looks good"})
	if res.IsError || text != "note recorded" || svc.calls.Load() != 1 {
		t.Fatalf("allowed note over MCP: %+v %q (service calls %d)", res, text, svc.calls.Load())
	}
	if id, _ := res.Meta["loadout.dev/toolCallId"].(string); !strings.HasPrefix(id, "mcp-") || svc.last.Load().Call.ID != id {
		t.Fatalf("the Service saw call id %q, the result names %q", svc.last.Load().Call.ID, id)
	}
}

// A reload changes the MCP tool set, and connected clients are told.
func TestMCP_ToolsFollowReloads(t *testing.T) {
	svc := newToolService(t, recordNote)
	s, ts, dir := newTestServer(t, runnableRegistry(svc.URL, 5))
	changed := make(chan struct{}, 1)
	session := connectMCP(t, ts.URL, changed)
	if names := toolNames(listMCP(t, session)); !slices.Equal(names, []string{"review_note"}) {
		t.Fatalf("before reload: %v", names)
	}

	next := runnableRegistry(svc.URL, 5)
	next.Tools[1].Service = nil // review_note becomes a declaration
	next.Tools = append(next.Tools, contract.Tool{Name: "lookup", Description: "Look something up", Extension: "review-extension",
		Service: &contract.ToolService{URL: svc.URL, TimeoutSeconds: 5}})
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, next))
	if err := s.Reload(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed notification after the reload")
	}
	if names := toolNames(listMCP(t, session)); !slices.Equal(names, []string{"lookup"}) {
		t.Fatalf("after reload: %v", names)
	}
	if res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: "review_note", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Fatalf("a tool that left the MCP set still ran: %+v", res)
	}
	if svc.calls.Load() != 0 {
		t.Fatal("service called")
	}
}

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
