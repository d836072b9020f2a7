package claudecode

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// rewritingPolicy rewrites, or asks about, every call.
type rewritingPolicy struct {
	fakePolicy
	verdict BeforeVerdict
}

func (p *rewritingPolicy) Before(context.Context, exthost.ToolCall) (BeforeVerdict, error) {
	return p.verdict, nil
}

func TestAnswer_SessionEventsInClaudeCodesShapes(t *testing.T) {
	rewritten := "***"
	p := &fakePolicy{events: map[vocab.HookEvent]exthost.EventOutcome{
		vocab.SessionStart:     {Allowed: true, Context: "TENANT"},
		vocab.BeforeAgentStart: {Allowed: true, Context: "TURN"},
		vocab.BeforeCompact:    {Message: "no compaction"},
	}}
	for in, want := range map[string]string{
		`{"hook_event_name":"SessionStart","source":"startup"}`: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"TENANT"}}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`:  `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"TURN"}}`,
		`{"hook_event_name":"PreCompact","trigger":"manual"}`:   `{"decision":"block","reason":"no compaction"}`,
		`{"hook_event_name":"SessionEnd","reason":"other"}`:     `{}`,
	} {
		if got := answer(t, Hook{Policy: p}, in); got != want {
			t.Errorf("%s answered %s, want %s", in, got, want)
		}
	}
	p.events[vocab.UserInput] = exthost.EventOutcome{Message: "no secrets"}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"UserPromptSubmit","prompt":"SECRET"}`); got != `{"decision":"block","reason":"no secrets"}` {
		t.Errorf("a denied prompt answered %s", got)
	}
	p.events[vocab.UserInput] = exthost.EventOutcome{Allowed: true, Input: &rewritten}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"UserPromptSubmit","prompt":"hunter2"}`); !strings.Contains(got, `"decision":"block"`) || !strings.Contains(got, "cannot replace a prompt") {
		t.Errorf("a rewritten prompt answered %s, want a block saying why", got)
	}
	p.events[vocab.SessionStart] = exthost.EventOutcome{Message: "closed"}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"SessionStart"}`); got != `{"systemMessage":"closed"}` {
		t.Errorf("a refused session answered %s", got)
	}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`); got != `{"decision":"block","reason":"closed"}` {
		t.Errorf("a prompt of a refused session answered %s", got)
	}
}

func TestAnswer_FailuresBlockGuardsAndNotObservers(t *testing.T) {
	p := &fakePolicy{err: errors.New("hostd down")}
	for _, in := range []string{
		`{"hook_event_name":"SessionStart"}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		`{"hook_event_name":"PreCompact"}`,
	} {
		if got := answer(t, Hook{Policy: p}, in); !strings.Contains(got, "hostd down") || !strings.Contains(got, "block") && !strings.Contains(got, "systemMessage") {
			t.Errorf("%s answered %s, want a block naming the failure", in, got)
		}
	}
	if got := answer(t, Hook{Policy: p}, `{"hook_event_name":"SessionEnd"}`); strings.Contains(got, "block") || strings.Contains(got, "continue") {
		t.Errorf("SessionEnd answered %s, want no block", got)
	}
}

func TestAnswer_PreToolUseRewriteAndAsk(t *testing.T) {
	args := map[string]any{"command": "terraform apply -dry-run"}
	p := &rewritingPolicy{verdict: BeforeVerdict{Arguments: args}}
	if got, want := answer(t, Hook{Policy: p}, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"terraform apply"}}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"terraform apply -dry-run"}}}`; got != want {
		t.Errorf("a rewrite answered %s, want %s", got, want)
	}
	p.verdict = BeforeVerdict{Ask: true, Blocked: &exthost.ToolResult{Content: []exthost.Content{{Type: "text", Text: "ASK: deploys"}}}}
	if got, want := answer(t, Hook{Policy: p}, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"deploy"}}`),
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"ASK: deploys"}}`; got != want {
		t.Errorf("an ask answered %s, want %s", got, want)
	}
}
