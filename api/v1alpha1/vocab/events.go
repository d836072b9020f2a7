package vocab

// HookEvent is the point of a session at which a hook runs. docs/hooks.md
// lists each event's payload, the outcomes it may return and whether its
// failure blocks or is only reported.
// +kubebuilder:validation:Enum=SessionStart;UserInput;BeforeAgentStart;TurnStart;BeforeModelRequest;AfterModelResponse;BeforeToolCall;AfterToolResult;ToolFailure;TurnEnd;Stop;BeforeCompact;SessionEnd
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
	// the agent's turn starts. They may deny it, ask, replace its text or add
	// context. They fail closed.
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
	// cancel the compaction or supply the summary it keeps. They fail
	// closed: an error cancels it.
	BeforeCompact HookEvent = "BeforeCompact"
	// SessionEnd hooks observe the end of a session. Their failures only
	// produce diagnostics.
	SessionEnd HookEvent = "SessionEnd"
	// TurnStart hooks observe the start of each turn (one model request and
	// the tool calls it asks for). Their failures only produce diagnostics.
	TurnStart HookEvent = "TurnStart"
	// TurnEnd hooks observe the end of each turn. Their failures only
	// produce diagnostics.
	TurnEnd HookEvent = "TurnEnd"
	// BeforeModelRequest hooks run before each request to the model and may
	// stop it or add context to it. They fail closed.
	BeforeModelRequest HookEvent = "BeforeModelRequest"
	// AfterModelResponse hooks observe each answer of the model. Their
	// failures only produce diagnostics.
	AfterModelResponse HookEvent = "AfterModelResponse"
	// Stop hooks run when the agent is about to end its work on a prompt. A
	// denial keeps it working: its message is the agent's next instruction.
	// A failure only produces a diagnostic, so a broken hook never keeps an
	// agent running.
	Stop HookEvent = "Stop"
)

// IsToolEvent reports whether hooks of e run around a tool call, and so see
// the call and may be limited to some tools with match.
func (e HookEvent) IsToolEvent() bool {
	return e == BeforeToolCall || e == AfterToolResult || e == ToolFailure
}
