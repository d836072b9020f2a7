package mcpclient_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// The reference server lists its tools, and only the allowed ones are kept,
// prefixed, with their schemas; calls return its text, image and structured
// results.
func TestEverything_DiscoverSelectsAndCallsReturnEveryKindOfContent(t *testing.T) {
	srv := testnet.StartEverything(t)
	doer := outbound.New(outbound.Options{})
	ep := mcpclient.Endpoint{URL: srv.URL, Timeout: 10 * time.Second}
	found, err := mcpclient.Discover(context.Background(), doer, ep,
		mcpclient.Selection{Allow: []string{"echo", "get-structured-content", "get-tiny-image"}, Prefix: "ev_"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range found.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"ev_echo", "ev_get-structured-content", "ev_get-tiny-image"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v (sorted, prefixed, allowed only)", names, want)
	}
	if found.Server == "" {
		t.Error("the server's name and version are missing")
	}
	ups := mcpclient.NewUpstreams(doer, nil)
	call := func(name, server string, args map[string]any) exthost.ToolResult {
		t.Helper()
		core, err := ups.Core(contract.Tool{Name: name, MCP: &contract.ToolMCP{URL: srv.URL, Tool: server, TimeoutSeconds: 10}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := core(context.Background(), exthost.ToolCall{ID: "c1", Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("ev_echo", "echo", map[string]any{"message": "hi"}); res.IsError || len(res.Content) != 1 || res.Content[0].Text != "Echo: hi" || res.ToolCallID != "c1" {
		t.Fatalf("echo = %+v", res)
	}
	res := call("ev_get-structured-content", "get-structured-content", map[string]any{"location": "Chicago"})
	sc, _ := res.Details[mcpclient.StructuredContentKey].(map[string]any)
	if res.IsError || sc["temperature"] == nil {
		t.Fatalf("structured = %+v, want structuredContent with a temperature", res)
	}
	res = call("ev_get-tiny-image", "get-tiny-image", nil)
	if !hasContent(res, "image", "image/png") {
		t.Fatalf("image = %+v, want an image/png block", res)
	}
}

func hasContent(res exthost.ToolResult, typ, mime string) bool {
	for _, c := range res.Content {
		if c.Type == typ && c.MimeType == mime && c.Data != "" {
			return true
		}
	}
	return false
}
