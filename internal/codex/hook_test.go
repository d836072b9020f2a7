package codex

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// policy answers every call with verdict and every event with outcome.
type policy struct {
	verdict claudecode.BeforeVerdict
	outcome exthost.EventOutcome
	err     error
}

func (p policy) Before(context.Context, exthost.ToolCall) (claudecode.BeforeVerdict, error) {
	return p.verdict, p.err
}

func (p policy) After(context.Context, exthost.ToolCall, exthost.ToolResult) ([]exthost.Diagnostic, error) {
	return nil, p.err
}

func (p policy) Event(context.Context, exthost.EventRequest) (exthost.EventOutcome, error) {
	return p.outcome, p.err
}

func answer(t *testing.T, p policy, input string) string {
	t.Helper()
	b, err := json.Marshal(Hook{Decide: claudecode.Hook{Policy: p}}.Answer(context.Background(), strings.NewReader(input)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Only shapes Codex 0.169 accepts: an ask is a denial, a rewrite is "allow"
// with updatedInput, a refused prompt is decision "block".
func TestAnswer_OnlyShapesCodexAccepts(t *testing.T) {
	pre := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"}}`
	asked := exthost.ToolResult{Content: []exthost.Content{{Type: "text", Text: "ASK"}}}
	rewritten := "***"
	for _, c := range []struct {
		p     policy
		input string
		want  string
	}{
		{policy{verdict: claudecode.BeforeVerdict{Ask: true, Blocked: &asked}}, pre,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ASK"}}`},
		{policy{verdict: claudecode.BeforeVerdict{Arguments: map[string]any{"command": "y"}}}, pre,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"y"}}}`},
		{policy{}, pre, `{}`},
		{policy{outcome: exthost.EventOutcome{Message: "no"}}, `{"hook_event_name":"UserPromptSubmit","prompt":"p"}`, `{"decision":"block","reason":"no"}`},
		{policy{outcome: exthost.EventOutcome{Allowed: true, Input: &rewritten}}, `{"hook_event_name":"UserPromptSubmit","prompt":"p"}`, `"decision":"block"`},
		{policy{outcome: exthost.EventOutcome{Allowed: true, Context: "C"}}, `{"hook_event_name":"SessionStart","source":"startup"}`,
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"C"}}`},
		{policy{outcome: exthost.EventOutcome{Message: "closed"}}, `{"hook_event_name":"SessionStart"}`, `{}`},
		{policy{err: errors.New("down")}, `{"hook_event_name":"UserPromptSubmit","prompt":"p"}`, `"decision":"block"`},
		{policy{err: errors.New("down")}, pre, `"permissionDecision":"deny"`},
		// PreCompact runs BeforeCompact; Codex fails a hook that answers it
		// a decision, so a denial is told, never a "block".
		{policy{outcome: exthost.EventOutcome{Message: "no compaction"}}, `{"hook_event_name":"PreCompact","trigger":"auto"}`,
			`{"systemMessage":"Loadout: no compaction (Codex cannot cancel a compaction from a hook; it goes on)"}`},
		{policy{outcome: exthost.EventOutcome{Allowed: true}}, `{"hook_event_name":"PreCompact","trigger":"auto"}`, `{}`},
		// PreModelRequest runs BeforeModelRequest; Codex sends the request
		// whatever the hook answers, so a denial or a context is told.
		{policy{outcome: exthost.EventOutcome{Message: "not this model"}}, `{"hook_event_name":"PreModelRequest","model":"gpt-x"}`,
			`{"systemMessage":"Loadout: not this model (Codex cannot stop a model request from a hook; it is sent)"}`},
		{policy{outcome: exthost.EventOutcome{Allowed: true, Context: "C"}}, `{"hook_event_name":"PreModelRequest","model":"gpt-x"}`, `context was not added`},
		{policy{outcome: exthost.EventOutcome{Allowed: true}}, `{"hook_event_name":"PreModelRequest","model":"gpt-x"}`, `{}`},
		{policy{}, `{"hook_event_name":"PermissionRequest"}`, `{}`},
	} {
		if got := answer(t, c.p, c.input); !strings.Contains(got, c.want) {
			t.Errorf("%s with %+v answered %s, want %s", c.input, c.p, got, c.want)
		}
	}
}

// recorder is a policy that keeps the event request it was asked.
type recorder struct {
	policy
	got *exthost.EventRequest
}

func (r recorder) Event(_ context.Context, req exthost.EventRequest) (exthost.EventOutcome, error) {
	*r.got = req
	return exthost.EventOutcome{Allowed: true}, nil
}

// Codex's PreModelRequest is Loadout's BeforeModelRequest with the model
// Codex names: a hook reads model.id.
func TestAnswer_PreModelRequestIsBeforeModelRequestWithTheModel(t *testing.T) {
	var got exthost.EventRequest
	out := Hook{Decide: claudecode.Hook{Policy: recorder{got: &got}}}.Answer(context.Background(),
		strings.NewReader(`{"hook_event_name":"PreModelRequest","session_id":"s1","turn_id":"t1","cwd":"/w","model":"gpt-x"}`))
	if got.Event != vocab.BeforeModelRequest || got.Model == nil || got.Model.ID != "gpt-x" || got.Session.ID != "s1" || got.Cwd != "/w" {
		t.Fatalf("event request %+v (model %+v)", got, got.Model)
	}
	if out != (Output{}) {
		t.Fatalf("an allowed model request answered %+v", out)
	}
}
