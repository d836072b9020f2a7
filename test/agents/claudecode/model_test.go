package claudecode

import (
	"testing"

	"github.com/loadout-dev/loadout/test/agents/messages"
)

// The scripted Anthropic Messages API the real Claude Code talks to is
// package messages (shared with test/hardening); these names keep this
// package's tests short.
type (
	Turn       = messages.Turn
	ToolUse    = messages.ToolUse
	Model      = messages.Model
	Request    = messages.Request
	Message    = messages.Message
	ToolResult = messages.ToolResult
)

// NewModel serves script until the test ends.
func NewModel(t testing.TB, script ...Turn) *Model {
	t.Helper()
	return messages.NewModel(t, script...)
}
