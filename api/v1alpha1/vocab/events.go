package vocab

// HookEvent is the point of a session at which a hook runs. docs/hooks.md
// lists each event's payload, the outcomes it may return and whether its
// failure blocks or is only reported.
// +kubebuilder:validation:Enum=SessionStart;UserInput;BeforeAgentStart;BeforeToolCall;AfterToolResult;ToolFailure;BeforeCompact;SessionEnd
type HookEvent string

const (
	// SessionStart hooks run when a session starts and may add context for
	// the model. They fail closed: an error, timeout or denial refuses the
	// session's prompts.
	SessionStart HookEvent = "SessionStart"
	// UserInput hooks see each prompt the user submits, before anything
	// reaches the model. They may deny it, ask, replace its text or add
	// context. They fail closed.
	UserInput HookEvent = "UserInput"
	// BeforeAgentStart hooks see the final prompt (templates rendered) before
	// the agent's turn starts. They may deny it, ask or add context. They
	// fail closed.
	BeforeAgentStart HookEvent = "BeforeAgentStart"
	// BeforeToolCall hooks run before the tool and may block it, ask, or
	// rewrite its arguments. They fail closed: an error or timeout blocks
	// the call.
	BeforeToolCall HookEvent = "BeforeToolCall"
	// AfterToolResult hooks observe the tool's result. Their failures only
	// produce diagnostics.
	AfterToolResult HookEvent = "AfterToolResult"
	// ToolFailure hooks observe a result that is an error, after the
	// AfterToolResult hooks. Their failures only produce diagnostics.
	ToolFailure HookEvent = "ToolFailure"
	// BeforeCompact hooks run before the agent compacts its context and may
	// cancel the compaction. They fail closed: an error cancels it.
	BeforeCompact HookEvent = "BeforeCompact"
	// SessionEnd hooks observe the end of a session. Their failures only
	// produce diagnostics.
	SessionEnd HookEvent = "SessionEnd"
)

// IsToolEvent reports whether hooks of e run around a tool call, and so see
// the call and may be limited to some tools with match.
func (e HookEvent) IsToolEvent() bool {
	return e == BeforeToolCall || e == AfterToolResult || e == ToolFailure
}
