// Package pinfile is `loadout mcp pin`'s work: list a live MCP server with
// the manager's own discovery and digest (so a pin written here is the
// digest the manager checks), and rewrite only the pins field of an
// Extension's YAML, keeping the rest of the file and its comments.
package pinfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Target is the server to list and the Extension to pin.
type Target struct {
	// Name picks the Extension (metadata.name) when the file holds several
	// with spec.mcpServer.
	Name string
	// URL is where to reach the server; empty means spec.mcpServer.url.
	URL string
	// Headers go with every request (an API key).
	Headers http.Header
	// CABundle verifies an https URL; empty means the system roots.
	CABundle []byte
	// Timeout bounds each request; zero means 30 s.
	Timeout time.Duration
}

// ParseHeaders reads "Name: value" flags.
func ParseHeaders(in []string) (http.Header, error) {
	if len(in) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, kv := range in {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", k)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}

// Pin lists the server of the one Extension of src with spec.mcpServer
// (or the one named t.Name) and returns src with that Extension's
// spec.mcpServer.tools.pins replaced by the listed tools' digests, as the
// manager computes them (extobject.DiscoveredStatus). Each pin is logged.
func Pin(ctx context.Context, src []byte, t Target, log io.Writer) ([]byte, error) {
	if t.Timeout <= 0 {
		t.Timeout = 30 * time.Second
	}
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
	var target *yaml.Node
	var ext v1alpha1.Extension
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		var e v1alpha1.Extension
		if err := sigsyaml.Unmarshal(b, &e); err != nil || e.Kind != "Extension" || e.Spec.MCPServer == nil {
			continue
		}
		if t.Name != "" && e.Name != t.Name {
			continue
		}
		if target != nil {
			return nil, errors.New("several Extensions with spec.mcpServer: choose one with --name")
		}
		target, ext = d, e
	}
	if target == nil {
		return nil, errors.New("no Extension with spec.mcpServer" + map[bool]string{true: " named " + t.Name}[t.Name != ""])
	}
	s := ext.Spec.MCPServer
	url := t.URL
	if url == "" {
		if s.URL == "" {
			return nil, errors.New("spec.mcpServer names a Service: give --url (a port-forward of it, say)")
		}
		url = s.URL
	}
	ep := mcpclient.Endpoint{URL: url, CABundle: t.CABundle, Timeout: t.Timeout, Anonymous: true}
	if t.Headers != nil {
		ep.Headers = func(context.Context) (http.Header, error) { return t.Headers, nil }
	}
	doer := outbound.New(outbound.Options{Timeout: t.Timeout, MaxResponseBytes: 4 << 20})
	found, err := mcpclient.Discover(ctx, doer, ep, mcpclient.Selection{Allow: s.Tools.Allow, Prefix: s.Tools.Prefix})
	if err != nil {
		return nil, err
	}
	st, err := extobject.DiscoveredStatus(url, found)
	if err != nil {
		return nil, err
	}
	pins := make([]v1alpha1.MCPToolPin, 0, len(st.Tools))
	for _, tool := range st.Tools {
		pins = append(pins, v1alpha1.MCPToolPin{Name: tool.ServerName, Digest: tool.Digest})
		_, _ = fmt.Fprintf(log, "pinned %s %s (%s)\n", tool.ServerName, tool.Digest, found.Server)
	}
	if err := setPins(target, pins); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// setPins replaces spec.mcpServer.tools.pins in the document, keeping
// every other node (and its comments) as it was.
func setPins(doc *yaml.Node, pins []v1alpha1.MCPToolPin) error {
	tools := doc
	if tools.Kind == yaml.DocumentNode && len(tools.Content) == 1 {
		tools = tools.Content[0]
	}
	for _, key := range []string{"spec", "mcpServer", "tools"} {
		tools = mappingValue(tools, key)
		if tools == nil || tools.Kind != yaml.MappingNode {
			return fmt.Errorf("spec.mcpServer.tools is not a mapping")
		}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, p := range pins {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: p.Name},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "digest"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: p.Digest},
		}})
	}
	if v := mappingValue(tools, "pins"); v != nil {
		seq.HeadComment, seq.LineComment, seq.FootComment = v.HeadComment, v.LineComment, v.FootComment
		*v = *seq
		return nil
	}
	tools.Content = append(tools.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "pins"}, seq)
	return nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
