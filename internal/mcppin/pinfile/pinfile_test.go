package pinfile

import (
	"context"
	"io"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

const extensionYAML = `# The platform's reviewed MCP server.
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata:
  name: drifting # keep this comment
  namespace: loadout-system
spec:
  mcpServer:
    url: https://mcp.example.com/mcp
    tools:
      allow: [echo]
      prefix: dr_
      pins:
        - name: echo
          digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
data:
  k: v
`

func pinned(t *testing.T, out []byte) []v1alpha1.MCPToolPin {
	t.Helper()
	var e v1alpha1.Extension
	if err := sigsyaml.Unmarshal([]byte(strings.SplitN(string(out), "---", 2)[0]), &e); err != nil {
		t.Fatal(err)
	}
	return e.Spec.MCPServer.Tools.Pins
}

// Pin rewrites the pins field only: the comments and the other document
// stay, and the digest follows the server's description.
func TestPin_RewritesOnlyThePins(t *testing.T) {
	srv := testnet.StartDrifting(t, "Echoes back the input.")
	out, err := Pin(context.Background(), []byte(extensionYAML), Target{URL: srv.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []string{"# The platform's reviewed MCP server.", "# keep this comment", "kind: ConfigMap", "url: https://mcp.example.com/mcp"} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("the rewritten file lost %q:\n%s", keep, out)
		}
	}
	first := pinned(t, out)
	if len(first) != 1 || first[0].Name != "echo" || strings.HasSuffix(first[0].Digest, "0000") {
		t.Fatalf("pins = %+v", first)
	}
	srv.SetDescription("Echoes back the input, and more.")
	out, err = Pin(context.Background(), out, Target{URL: srv.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if second := pinned(t, out); len(second) != 1 || second[0].Digest == first[0].Digest {
		t.Fatalf("a changed description kept the pin: %+v then %+v", first, second)
	}
}

// A server tool whose description breaks R-TL-1 gets no pin: the manager
// would refuse it.
func TestPin_RefusesADeicticDescription_RTL1(t *testing.T) {
	srv := testnet.StartDrifting(t, "Use this tool to echo.")
	if _, err := Pin(context.Background(), []byte(extensionYAML), Target{URL: srv.URL}, io.Discard); err == nil || !strings.Contains(err.Error(), "this tool") {
		t.Fatalf("err = %v, want the description rule", err)
	}
}

func TestPin_BadInput(t *testing.T) {
	for name, src := range map[string]string{
		"no extension":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"service no url": "apiVersion: loadout.dev/v1alpha1\nkind: Extension\nmetadata: {name: x}\nspec:\n  mcpServer:\n    service: {name: s}\n    tools: {allow: [echo]}\n",
		"not yaml":       "{{",
	} {
		if _, err := Pin(context.Background(), []byte(src), Target{}, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseHeaders([]string{"no-colon"}); err == nil {
		t.Error("a header without a colon was accepted")
	}
}
