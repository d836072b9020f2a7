package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Discovery bounds: a server that lies, hangs or floods is refused with a
// reason instead of growing the manager's memory or an Extension's status.
const (
	// MaxDiscoveryTime bounds a whole discovery: connect, every page, close.
	MaxDiscoveryTime = 30 * time.Second
	// MaxPages bounds tools/list pages (a cursor that never ends).
	MaxPages = 16
	// MaxListedTools bounds the tools a server may list across pages,
	// allowed or not.
	MaxListedTools = 1024
	// MaxSchemaBytes bounds one selected tool's input schema.
	MaxSchemaBytes = 64 << 10
	// MaxSelectedBytes bounds the selected tools' schemas and descriptions
	// together: they go into the Extension's status and every context.
	MaxSelectedBytes = 512 << 10
	// MaxDescriptionRunes is where a description is cut (the API's bound).
	MaxDescriptionRunes = 1024
)

// toolNamePattern is a tool name every agent accepts (the API's ToolName).
var toolNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// Selection is which of a server's tools an extension carries.
type Selection struct {
	// Allow names the server's tools to keep.
	Allow []string
	// Prefix goes before each kept tool's name.
	Prefix string
}

// Tool is a server's tool as an extension registers it.
type Tool struct {
	// Name is the prefixed name agents call.
	Name string
	// ServerName is the name on the server.
	ServerName  string
	Description string
	// InputSchema is the server's schema, compacted; it compiles
	// (exthost.CompileInputSchema).
	InputSchema json.RawMessage
	// OutputSchema is the server's output schema, compacted; nil when it
	// gave none. Only pins read it (internal/mcppin).
	OutputSchema json.RawMessage
	Annotations  *mcp.ToolAnnotations
}

// Discovery is what a server offered.
type Discovery struct {
	// Server is the name and version the server reported.
	Server string
	// Tools kept by the selection, sorted by name.
	Tools []Tool
}

// Discover lists the tools of the server at ep and keeps the selected ones.
// It is bounded in time (MaxDiscoveryTime and ep.Timeout per page), in
// bytes (the doer's answer cap), pages (MaxPages) and tools
// (MaxListedTools); a selected tool whose name is not a valid tool name
// once prefixed, whose schema does not compile, or that the server lists
// twice fails the discovery with an error naming it, as does an allowed
// tool the server does not offer.
func Discover(ctx context.Context, doer outbound.Doer, ep Endpoint, sel Selection) (Discovery, error) {
	ctx, cancel := context.WithTimeout(ctx, MaxDiscoveryTime)
	defer cancel()
	var out Discovery
	session, err := connect(ctx, doer, ep)
	if err != nil {
		return out, fmt.Errorf("connect to %s: %w", ep.URL, deadlineSays(ctx, err))
	}
	defer func() { _ = session.Close() }()
	if init := session.InitializeResult(); init != nil && init.ServerInfo != nil {
		out.Server = cut(strings.TrimSpace(init.ServerInfo.Name+" "+init.ServerInfo.Version), 256)
	}
	listed, err := listTools(ctx, session)
	if err != nil {
		return out, fmt.Errorf("list the tools of %s: %w", ep.URL, deadlineSays(ctx, err))
	}
	out.Tools, err = selectTools(listed, sel)
	return out, err
}

// listTools pages through tools/list within the page and tool bounds.
func listTools(ctx context.Context, session *mcp.ClientSession) ([]*mcp.Tool, error) {
	var all []*mcp.Tool
	cursor := ""
	for page := 1; ; page++ {
		if page > MaxPages {
			return nil, fmt.Errorf("more than %d pages of tools", MaxPages)
		}
		res, err := session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if len(all) > MaxListedTools {
			return nil, fmt.Errorf("more than %d tools listed", MaxListedTools)
		}
		if res.NextCursor == "" {
			return all, nil
		}
		if res.NextCursor == cursor {
			return nil, errors.New("the server answered the same cursor again")
		}
		cursor = res.NextCursor
	}
}

// selectTools keeps the allowed tools, prefixed, checked and sorted.
func selectTools(listed []*mcp.Tool, sel Selection) ([]Tool, error) {
	seen := map[string]bool{}
	var out []Tool
	var errs []error
	total := 0
	for _, t := range listed {
		if t == nil || !slices.Contains(sel.Allow, t.Name) {
			continue
		}
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("tool %q: listed twice", t.Name))
			continue
		}
		seen[t.Name] = true
		tool, err := selectTool(t, sel.Prefix)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", t.Name, err))
			continue
		}
		total += len(tool.InputSchema) + len(tool.OutputSchema) + len(tool.Description)
		out = append(out, tool)
	}
	for _, name := range sel.Allow {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("tool %q is allowed but the server does not offer it", name))
		}
	}
	if total > MaxSelectedBytes {
		errs = append(errs, fmt.Errorf("the allowed tools' schemas and descriptions take %d bytes, over the limit of %d", total, MaxSelectedBytes))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func selectTool(t *mcp.Tool, prefix string) (Tool, error) {
	tool := Tool{Name: prefix + t.Name, ServerName: t.Name, Description: cut(t.Description, MaxDescriptionRunes)}
	if !toolNamePattern.MatchString(tool.Name) {
		return tool, fmt.Errorf("name %q is not a tool name every agent accepts (%s)", tool.Name, toolNamePattern)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return tool, fmt.Errorf("inputSchema: %w", err)
	}
	if len(schema) > MaxSchemaBytes {
		return tool, fmt.Errorf("inputSchema takes %d bytes, over the limit of %d", len(schema), MaxSchemaBytes)
	}
	if string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	if _, err := exthost.CompileInputSchema(schema); err != nil {
		return tool, fmt.Errorf("inputSchema: %w", err)
	}
	tool.InputSchema = schema
	if t.OutputSchema != nil {
		out, err := json.Marshal(t.OutputSchema)
		if err != nil {
			return tool, fmt.Errorf("outputSchema: %w", err)
		}
		if len(out) > MaxSchemaBytes {
			return tool, fmt.Errorf("outputSchema takes %d bytes, over the limit of %d", len(out), MaxSchemaBytes)
		}
		if string(out) != "null" {
			tool.OutputSchema = out
		}
	}
	if a := t.Annotations; a != nil {
		c := *a
		c.Title = cut(c.Title, 256)
		tool.Annotations = &c
	}
	return tool, nil
}

// cut shortens s to at most n runes, on a rune boundary.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// deadlineSays names the deadline when one ended the exchange, instead of
// the transport's wording of it.
func deadlineSays(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within the deadline (%w)", err)
	}
	return err
}
