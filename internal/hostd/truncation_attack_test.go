package hostd

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// secretAuditRegistry is a runnable review_note whose answers are cut at
// 256 bytes, and the platform's imposed after hook that flags any answer
// carrying SECRET.
func secretAuditRegistry(url string) contract.Registry {
	reg := limitedRegistry(url, &contract.ToolOutput{MaxBytes: 256, OnOverflow: contract.OverflowTruncate})
	reg.Hooks = append(reg.Hooks, contract.Hook{Extension: "platform-audit", Name: "no-secret-answers", Event: contract.EventAfterToolResult,
		Tools: []string{"review_note"}, TimeoutSeconds: 10, Imposed: true,
		CEL: &contract.CELHook{Expression: "!result.content.exists(c, has(c.text) && c.text.contains('SECRET'))", Message: "the answer carries a SECRET"}})
	reg.Extensions = append(reg.Extensions, "platform-audit")
	return reg
}

func flaggedBy(diags []struct{ ext, hook string }, ext, hook string) bool {
	for _, d := range diags {
		if d.ext == ext && d.hook == hook {
			return true
		}
	}
	return false
}

// The platform's after hook judges the whole answer, before it is cut: a
// short answer with SECRET is flagged, and so is a 4 KiB answer cut to 256
// bytes with SECRET after byte 256, which is then withheld whole: the agent
// gets neither the cut part nor a /v1/results id for the rest. On the code
// before, the cut happened inside the tool's core, the after hook judged the
// first 256 bytes only and passed them, and GET /v1/results/<id> handed out
// the whole answer, secret included.
func TestAttack_TruncatedAnswerIsJudgedWholeByTheAfterHooks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
	}{
		{"a short answer", "the key is SECRET"},
		{"a 4 KiB answer cut to 256 bytes", strings.Repeat("x", 300) + " SECRET " + strings.Repeat("y", 4096-308)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newToolService(t, answerText(tc.answer))
			_, ts, _ := newTestServer(t, secretAuditRegistry(svc.URL))
			_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "x"}})
			var diags []struct{ ext, hook string }
			for _, d := range resp.Diagnostics {
				diags = append(diags, struct{ ext, hook string }{d.ExtensionID, d.Hook})
			}
			if !resp.Executed || !flaggedBy(diags, "platform-audit", "no-secret-answers") {
				t.Fatalf("the platform's after hook did not flag the answer: %+v", resp)
			}
			if len(tc.answer) <= 256 {
				return // within the limit: flagged, and the answer stands (after hooks observe)
			}
			text := ""
			for _, c := range resp.Result.Content {
				text += c.Text
			}
			if !resp.Result.IsError || strings.Contains(text, "xxxx") || strings.Contains(text, "/v1/results/") || resp.Result.Details[TruncatedDetailsKey] != nil ||
				!strings.Contains(text, "withheld whole") {
				t.Fatalf("a flagged truncated answer reached the agent: %+v", resp.Result)
			}
		})
	}
}

// GET /v1/results/<id> answers only the session and call that produced
// the answer: the id alone, another call's id, or another session get 404.
// On the code before, the id alone read the whole answer.
func TestAttack_KeptResultAnswersOnlyItsSessionAndCall(t *testing.T) {
	whole := strings.Repeat("z", 4096)
	svc := newToolService(t, answerText(whole))
	_, ts, _ := newTestServer(t, limitedRegistry(svc.URL, &contract.ToolOutput{MaxBytes: 256, OnOverflow: contract.OverflowTruncate}))
	var resp ToolRunResponse
	post(t, ts.URL+"/v1/tools/review_note", map[string]any{"session": map[string]any{"id": "s-1"},
		"call": map[string]any{"id": "t-1", "arguments": map[string]any{"text": "x"}}}, &resp)
	d, _ := resp.Result.Details[TruncatedDetailsKey].(map[string]any)
	path, _ := d["result"].(string)
	if !strings.HasPrefix(path, "/v1/results/") {
		t.Fatalf("no kept answer: %+v", resp.Result)
	}
	for _, q := range []string{"", "?call=t-1", "?session=s-1", "?session=s-2&call=t-1", "?session=s-1&call=t-2"} {
		if code, body := testnet.Get(t, ts.URL+path+q); code != http.StatusNotFound || strings.Contains(body, "zzzz") {
			t.Errorf("GET %s%s: %d, want 404", path, q, code)
		}
	}
	if code, body := testnet.Get(t, ts.URL+path+"?session=s-1&call=t-1"); code != http.StatusOK || !strings.Contains(body, whole) {
		t.Fatalf("the owner: %d", code)
	}
}

// Over MCP, a kept answer is read as the resource its marker names, by the
// MCP session whose tools/call produced it; another session gets not-found.
func TestAttack_KeptResultOverMCPAnswersOnlyItsSession(t *testing.T) {
	whole := strings.Repeat("z", 4096)
	svc := newToolService(t, answerText(whole))
	_, ts, _ := newTestServer(t, limitedRegistry(svc.URL, &contract.ToolOutput{MaxBytes: 256, OnOverflow: contract.OverflowTruncate}))
	owner, other := connectMCP(t, ts.URL, nil), connectMCP(t, ts.URL, nil)
	res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: "review_note", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	d, _ := res.Meta["loadout.dev/details"].(map[string]any)
	tr, _ := d[TruncatedDetailsKey].(map[string]any)
	uri, _ := tr["resource"].(string)
	if !strings.HasPrefix(uri, keptResultURIPrefix) {
		t.Fatalf("no kept resource: %+v", res.Meta)
	}
	if got, err := other.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatalf("another MCP session read the kept answer: %+v", got)
	}
	got, err := owner.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(got.Contents) != 1 || !strings.Contains(got.Contents[0].Text, whole) {
		t.Fatalf("the owner's session: %v", err)
	}
}
