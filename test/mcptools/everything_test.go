package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// everythingExtension puts server-everything (Service "everything", port
// 3001) behind an Extension with three allowed tools, a hook that denies any
// call carrying SECRET and a hook that rewrites one echo message.
func everythingExtension(ns string) *v1alpha1.Extension {
	ext := testenv.Extension(ns, "everything", nil,
		testenv.CELHook("no-secrets", vocab.BeforeToolCall, `!has(call.arguments.message) || !call.arguments.message.contains('SECRET')`),
		testenv.CELHook("rewrite", vocab.BeforeToolCall,
			`has(call.arguments.message) && call.arguments.message == 'rewrite-me' ? {'arguments': {'message': 'rewritten'}} : {}`))
	ext.Spec.MCPServer = &v1alpha1.MCPServer{
		Service: &v1alpha1.MCPServiceReference{Name: "everything", Port: 3001, Path: "/mcp", Scheme: v1alpha1.SchemeHTTP},
		Tools:   v1alpha1.MCPToolSelection{Allow: []string{"echo", "get-structured-content", "get-tiny-image"}, Prefix: "ev_"},
	}
	return ext
}

func workspaceIn(ns string) *v1alpha1.Workspace {
	return &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}}}
}

// TestEverything_BehindAnExtensionThroughHostd is the whole path with the
// MCP project's reference server (R-EXT-6): its tools
// in the Extension's status and the Workspace's registry, calls through
// hostd over REST and MCP with text, structured and image results, a denial
// the server never sees, a rewrite it does see, a tool outside the allow list
// neither listed nor callable, and a stopped server blocking the call with
// a reason.
func TestEverything_BehindAnExtensionThroughHostd(t *testing.T) {
	srv := testnet.StartEverything(t)
	rec := newRecorder(t, srv.URL)
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	svcHost := fmt.Sprintf("everything.%s.svc:3001", ns)
	routes.add(svcHost, rec.addr)
	kit.Create(t, everythingExtension(ns))
	kit.Create(t, workspaceIn(ns))

	ext := waitDiscovered(t, ns, "everything")
	var names []string
	for _, tool := range ext.Status.MCPServer.Tools {
		names = append(names, string(tool.Name))
		if tool.InputSchema == nil || !bytes.Contains(tool.InputSchema.Raw, []byte(`"type":"object"`)) {
			t.Errorf("tool %s: inputSchema %v, want the server's object schema", tool.Name, tool.InputSchema)
		}
	}
	if want := []string{"ev_echo", "ev_get-structured-content", "ev_get-tiny-image"}; !slices.Equal(names, want) {
		t.Fatalf("status.mcpServer.tools = %v, want %v", names, want)
	}
	if ext.Status.MCPServer.Endpoint != "http://"+svcHost+"/mcp" {
		t.Errorf("status.mcpServer.endpoint = %q", ext.Status.MCPServer.Endpoint)
	}

	_, cm := kit.Published(t, ns, "dev", "ev_echo")
	reg := registryOf(t, cm)
	echo := toolNamed(reg, "ev_echo")
	if echo == nil || echo.MCP == nil || echo.MCP.Tool != "echo" || !bytes.Contains(echo.InputSchema, []byte(`"message"`)) {
		t.Fatalf("registry's ev_echo = %+v, want the server's echo with its schema", echo)
	}
	if toolNamed(reg, "ev_get-sum") != nil {
		t.Fatal("get-sum is not allowed but is in the registry")
	}

	h := startHostd(t, cm, svcHost, rec.addr)

	// REST: text, structured content, an image.
	out := callREST(t, h, "ev_echo", map[string]any{"message": "hello"})
	if !out.Executed || out.Result.IsError || out.Result.Content[0].Text != "Echo: hello" {
		t.Fatalf("ev_echo = %+v", out)
	}
	out = callREST(t, h, "ev_get-structured-content", map[string]any{"location": "Chicago"})
	if sc, _ := out.Result.Details["structuredContent"].(map[string]any); out.Result.IsError || sc["temperature"] == nil {
		t.Fatalf("ev_get-structured-content = %+v, want structuredContent", out.Result)
	}
	out = callREST(t, h, "ev_get-tiny-image", nil)
	if !slices.ContainsFunc(out.Result.Content, func(c contentBlock) bool { return c.Type == "image" && c.MimeType == "image/png" && c.Data != "" }) {
		t.Fatalf("ev_get-tiny-image = %+v, want an image/png block", out.Result)
	}

	// A denied call never reaches the server; a rewritten one arrives rewritten.
	out = callREST(t, h, "ev_echo", map[string]any{"message": "the SECRET is 42"})
	if out.Executed || !out.Result.IsError {
		t.Fatalf("a call with SECRET = %+v, want blocked", out)
	}
	out = callREST(t, h, "ev_echo", map[string]any{"message": "rewrite-me"})
	if !out.Executed || out.Result.Content[0].Text != "Echo: rewritten" {
		t.Fatalf("a rewritten call = %+v, want the server to echo the rewrite", out)
	}
	if seen := rec.seen(); strings.Contains(seen, "SECRET") || strings.Contains(seen, "rewrite-me") || !strings.Contains(seen, "rewritten") {
		t.Fatalf("the server saw:\n%s\nwant the rewrite and neither the denied call nor the original", seen)
	}

	// A tool outside the allow list is not callable.
	if code, body := postTool(t, h, "ev_get-sum", map[string]any{"a": 1, "b": 2}); code != http.StatusNotFound {
		t.Fatalf("ev_get-sum answered %d %s, want 404", code, body)
	}

	// MCP: the same tools, the same results, the SDK's client.
	session := mcpSession(t, h)
	listed, err := session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mcpNames []string
	for _, tool := range listed.Tools {
		mcpNames = append(mcpNames, tool.Name)
	}
	if slices.Contains(mcpNames, "ev_get-sum") || !slices.Contains(mcpNames, "ev_echo") {
		t.Fatalf("MCP tools = %v, want the allowed tools only", mcpNames)
	}
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "ev_get-structured-content", Arguments: map[string]any{"location": "Chicago"}})
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("MCP ev_get-structured-content = %+v, %v; want structuredContent", res, err)
	}
	res, err = session.CallTool(context.Background(), &mcp.CallToolParams{Name: "ev_get-tiny-image"})
	if err != nil || !slices.ContainsFunc(res.Content, func(c mcp.Content) bool { img, ok := c.(*mcp.ImageContent); return ok && img.MIMEType == "image/png" }) {
		t.Fatalf("MCP ev_get-tiny-image = %+v, %v; want an image", res, err)
	}
	res, err = session.CallTool(context.Background(), &mcp.CallToolParams{Name: "ev_echo", Arguments: map[string]any{"message": "SECRET over MCP"}})
	if err != nil || !res.IsError {
		t.Fatalf("MCP call with SECRET = %+v, %v; want an error result", res, err)
	}
	if strings.Contains(rec.seen(), "SECRET") {
		t.Fatal("the server saw a denied MCP call")
	}

	// The server stops: the call is blocked with a reason, never passed.
	srv.Stop()
	out = callREST(t, h, "ev_echo", map[string]any{"message": "anyone there?"})
	if !out.Result.IsError || !strings.Contains(textOf(out.Result.Content), "MCP server") {
		t.Fatalf("a call with the server down = %+v, want an error result naming the MCP server", out.Result)
	}
}

func waitDiscovered(t *testing.T, ns, name string) *v1alpha1.Extension {
	t.Helper()
	ext := &v1alpha1.Extension{}
	kit.Eventually(t, func() error {
		if err := kit.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ext); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ext.Status.Conditions, string(vocab.ConditionToolsDiscovered))
		if c == nil || c.Status != metav1.ConditionTrue || ext.Status.MCPServer == nil {
			return fmt.Errorf("not discovered yet: %+v", c)
		}
		return nil
	})
	return ext
}

func registryOf(t *testing.T, cm *corev1.ConfigMap) contract.Registry {
	t.Helper()
	return testenv.ManifestOf(t, cm).Registry
}

func toolNamed(reg contract.Registry, name string) *contract.Tool {
	for i := range reg.Tools {
		if reg.Tools[i].Name == name {
			return &reg.Tools[i]
		}
	}
	return nil
}

// startHostd serves the published context with hostd in process, reaching
// the Service at svcHost through addr.
func startHostd(t *testing.T, cm *corev1.ConfigMap, svcHost, addr string) string {
	t.Helper()
	return serveContext(t, cm, svcHost, addr, hostd.Options{})
}

// serveContext is startHostd with opts for what else hostd needs; it
// returns the API's URL.
func serveContext(t *testing.T, cm *corev1.ConfigMap, svcHost, addr string, opts hostd.Options) string {
	t.Helper()
	opts.ContextDir = resourcestest.Tree(t, cm.Data)
	opts.Outbound = outbound.New(outbound.Options{Addresses: map[string]string{svcHost: addr}})
	s := hostd.New(opts)
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	return testnet.ServeHandler(t, s.Handler()).URL
}

type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type toolRun struct {
	Executed bool `json:"executed"`
	Result   struct {
		IsError bool           `json:"isError"`
		Content []contentBlock `json:"content"`
		Details map[string]any `json:"details"`
	} `json:"result"`
}

func postTool(t *testing.T, h, name string, args map[string]any) (int, string) {
	t.Helper()
	body := testenv.JSON(t, map[string]any{"call": map[string]any{"id": "call-1", "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, h+"/v1/tools/"+name, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return testnet.Do(t, nil, req)
}

func callREST(t *testing.T, h, name string, args map[string]any) toolRun {
	t.Helper()
	code, body := postTool(t, h, name, args)
	if code != http.StatusOK {
		t.Fatalf("POST /v1/tools/%s answered %d: %s", name, code, body)
	}
	var out toolRun
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func textOf(cs []contentBlock) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Text)
	}
	return b.String()
}

func mcpSession(t *testing.T, h string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h + hostd.MCPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
