package demo

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/test/manifests"
)

// The tour's MCP server: the analytics warehouse's, which the platform puts
// behind an Extension (tour/analytics.yaml). The manager discovers its tool
// at spec.mcpServer.url, so the server must be reachable without cluster
// DNS: the demo serves it itself, over TLS on a loopback port, and the
// Extension carries the certificate as its caBundle.

//go:embed tour/analytics.yaml
var analyticsYAML string

// mcpTool is the name the Workspace's registry gives the server's run_query.
const mcpTool = "analytics_run_query"

// mcpServer is the running analytics server and the SQL it received.
type mcpServer struct {
	srv   *httptest.Server
	url   string
	caPEM []byte

	mu  sync.Mutex
	sql []string
}

// queryInput is run_query's input; the SDK derives the tool's schema from it.
type queryInput struct {
	SQL string `json:"sql" jsonschema:"the SELECT statement to run"`
}

// startMCPServer serves run_query over streamable HTTP with TLS until the
// demo's cleanup closes it.
func (d *demo) startMCPServer() (*mcpServer, error) {
	m := &mcpServer{}
	server := mcp.NewServer(&mcp.Implementation{Name: "analytics", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "run_query", Description: "Run a read-only SQL query on the analytics warehouse.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in queryInput) (*mcp.CallToolResult, any, error) {
			m.mu.Lock()
			m.sql = append(m.sql, in.SQL)
			m.mu.Unlock()
			text := fmt.Sprintf("1 row: count=1284 (%s)", in.SQL)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	m.srv = httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	m.srv.StartTLS()
	// After the processes stop; a client's open stream must not hold Close.
	d.stops = append(d.stops, func() { m.srv.CloseClientConnections(); m.srv.Close() })
	m.url = m.srv.URL + "/mcp"
	m.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.srv.Certificate().Raw})
	return m, nil
}

// received is the SQL the server was sent, in order.
func (m *mcpServer) received() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sql)
}

// applyMCPExtension starts the server and applies the Extension naming it.
func (d *demo) applyMCPExtension(ctx context.Context) (*mcpServer, error) {
	m, err := d.startMCPServer()
	if err != nil {
		return nil, err
	}
	d.step("The platform puts its analytics MCP server behind an Extension (internal/test/demo/tour/analytics.yaml)")
	yaml := strings.NewReplacer("${URL}", m.url, "${CA_BUNDLE}", base64.StdEncoding.EncodeToString(m.caPEM)).Replace(analyticsYAML)
	if err := d.applyYAML(ctx, "tour/analytics.yaml", yaml); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.out, "MCP server analytics (the MCP Go SDK, streamable HTTP) at %s, TLS with a self-signed certificate\n"+
		"  that spec.mcpServer.caBundle carries; the manager discovers run_query there and lists it as %s,\n"+
		"  behind the Extension's no-payroll hook\n", m.url, mcpTool)
	return m, nil
}

// applyYAML applies the objects of one of the tour's manifests and names them.
func (d *demo) applyYAML(ctx context.Context, file, yaml string) error {
	objs, err := manifests.Decode([]byte(yaml))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var ms []manifests.Manifest
	for _, o := range objs {
		ms = append(ms, manifests.Manifest{File: file, Object: o})
	}
	if err := manifests.Apply(ctx, d.client, ms); err != nil {
		return err
	}
	for _, m := range ms {
		fmt.Fprintf(d.out, "applied %s\n", m)
	}
	return nil
}

// callMCPTool runs the server's tool through hostd twice: a query the hook
// allows, which the server answers, and one on the payroll tables, which
// the hook denies before the server sees it.
func (d *demo) callMCPTool(ctx context.Context, base string, m *mcpServer, res *Result) error {
	if err := d.showDiscovered(ctx); err != nil {
		return err
	}
	res.MCPCall = exthost.ToolCall{ID: "call-7", Name: mcpTool, Arguments: map[string]any{"sql": "SELECT count(*) FROM orders WHERE day = current_date"}}
	res.MCPDeniedCall = exthost.ToolCall{ID: "call-8", Name: mcpTool, Arguments: map[string]any{"sql": "SELECT name, salary FROM payroll"}}
	var err error
	if res.MCPRun, err = d.runTool(ctx, base, res.MCPCall); err != nil {
		return err
	}
	if res.MCPDeniedRun, err = d.runTool(ctx, base, res.MCPDeniedCall); err != nil {
		return err
	}
	res.MCPServerSaw = m.received()
	d.step("What the analytics MCP server received")
	for _, q := range res.MCPServerSaw {
		fmt.Fprintf(d.out, "run_query %s\n", q)
	}
	if err := checkMCPRuns(res); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nThe orders query reached the MCP server through hostd; the payroll query was denied by the\n"+
		"analytics Extension's no-payroll hook, and the server never saw it.\n")
	return nil
}

// showDiscovered prints what the manager discovered on the server, from
// the Extension's status.
func (d *demo) showDiscovered(ctx context.Context) error {
	ext := &v1alpha1.Extension{}
	key := types.NamespacedName{Namespace: PlatformNamespace, Name: "analytics"}
	if err := d.client.Get(ctx, key, ext); err != nil {
		return fmt.Errorf("reading Extension %s: %w", key, err)
	}
	st := ext.Status.MCPServer
	if st == nil {
		return fmt.Errorf("the Extension %s has no status.mcpServer: the manager discovered nothing", key)
	}
	d.step("An MCP server's tool behind a hook: Extension %s status.mcpServer", key)
	fmt.Fprintf(d.out, "server %s at %s\n", st.Server, st.Endpoint)
	for _, t := range st.Tools {
		fmt.Fprintf(d.out, "  %s (the server's %s): %s\n", t.Name, t.ServerName, t.Description)
	}
	fmt.Fprintf(d.out, "Agents call it through hostd (POST /v1/tools/%s, or hostd's MCP endpoint), past the platform's hooks.\n", mcpTool)
	return nil
}

// checkMCPRuns fails the demo unless the allowed query ran on the server
// and the payroll query stopped at the hook.
func checkMCPRuns(res *Result) error {
	ok, denied := res.MCPRun, res.MCPDeniedRun
	switch {
	case !ok.Executed || ok.Result.IsError || !strings.Contains(textOf(ok.Result), "count=1284"):
		return fmt.Errorf("hostd did not run %s on the MCP server: %+v", res.MCPCall.ID, ok)
	case denied.Executed || !denied.Result.IsError || denied.Result.Details["hook"] != "no-payroll":
		return fmt.Errorf("the payroll query %s was not denied by the no-payroll hook: %+v", res.MCPDeniedCall.ID, denied)
	case !slices.Equal(res.MCPServerSaw, []string{res.MCPCall.Arguments["sql"].(string)}):
		return fmt.Errorf("the MCP server received %q, want only the orders query", res.MCPServerSaw)
	}
	return nil
}

// runTool asks hostd to run a tool itself (POST /v1/tools/{name}).
func (d *demo) runTool(ctx context.Context, base string, call exthost.ToolCall) (hostd.ToolRunResponse, error) {
	var out hostd.ToolRunResponse
	// The path names the tool; the body carries the id and arguments.
	body, err := json.Marshal(map[string]any{"call": map[string]any{"id": call.ID, "arguments": call.Arguments}})
	if err != nil {
		return out, err
	}
	return out, d.postJSON(ctx, base+"/v1/tools/"+call.Name, body, &out)
}

func textOf(r exthost.ToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
