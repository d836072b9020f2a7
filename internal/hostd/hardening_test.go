package hostd

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// TestBefore_CELRuntimeErrorsFailClosed is the hook-time part of the
// bad-input catalog: CEL that compiles but fails while evaluating a call (a
// missing key, a type mismatch, a division by zero, the cost limit) blocks
// the call through hostd with a paired result and an error diagnostic naming
// the hook (rule R-HK-3). The same hook as an after hook only diagnoses
// (R-HK-5).
func TestBefore_CELRuntimeErrorsFailClosed(t *testing.T) {
	items := "[" + strings.TrimSuffix(strings.Repeat("1,", 200), ",") + "]"
	for _, tc := range []struct {
		name, expr, args, why string
	}{
		{"missing key", "call.arguments.path.startsWith('/tmp')", `{}`, "no such key"},
		{"type mismatch", "call.arguments.n > 3", `{"n":"four"}`, "no such overload"},
		{"division by zero", "10 / size(call.arguments) > 1", `{}`, "division by zero"},
		{"cost limit", "call.arguments.items.all(x, call.arguments.items.all(y, call.arguments.items.all(z, x + y + z > 0)))",
			`{"items":` + items + `}`, "cost limit"},
		{"not a bool at run time", "call.arguments.flag", `{"flag":"yes"}`, "bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := contract.Registry{
				Tools: []contract.Tool{{Name: "run", Description: "Runs.", Extension: "policy"}},
				Hooks: []contract.Hook{
					{Extension: "policy", Name: "check", Event: contract.EventBeforeToolCall, TimeoutSeconds: 10, CEL: &contract.CELHook{Expression: tc.expr, Message: "denied"}},
					{Extension: "policy", Name: "audit", Event: contract.EventAfterToolResult, TimeoutSeconds: 10, CEL: &contract.CELHook{Expression: tc.expr}},
				},
				Extensions: []string{"policy"},
			}
			_, ts, _ := newTestServer(t, reg)
			var before BeforeResponse
			body := `{"call":{"id":"c1","name":"run","arguments":` + tc.args + `}}`
			if code := post(t, ts.URL+"/v1/before", body, &before); code != 200 {
				t.Fatalf("status %d", code)
			}
			if before.Allowed || before.Result == nil || !before.Result.IsError || before.Result.ToolCallID != "c1" || before.Result.ToolName != "run" {
				t.Fatalf("not a paired block: %+v", before)
			}
			if len(before.Diagnostics) != 1 || before.Diagnostics[0].Hook != "check" || before.Diagnostics[0].Kind != "error" ||
				!strings.Contains(before.Diagnostics[0].Message, tc.why) {
				t.Errorf("diagnostics %+v, want one error from hook check mentioning %q", before.Diagnostics, tc.why)
			}
			var after AfterResponse
			afterBody := `{"call":{"id":"c1","name":"run","arguments":` + tc.args + `},"result":{"toolCallId":"c1","toolName":"run","content":[]}}`
			if code := post(t, ts.URL+"/v1/after", afterBody, &after); code != 200 {
				t.Fatalf("after: status %d", code)
			}
			if len(after.Diagnostics) != 1 || after.Diagnostics[0].Hook != "audit" {
				t.Errorf("after diagnostics %+v, want one from audit", after.Diagnostics)
			}
		})
	}
}
