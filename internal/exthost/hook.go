package exthost

import (
	"context"
	"slices"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// Hook timeouts (rule R-HK-7): a hook that sets none waits DefaultTimeout, and
// no hook makes the host wait longer than MaxTimeout.
const (
	DefaultTimeout = vocab.DefaultHookTimeoutSeconds * time.Second
	MaxTimeout     = vocab.MaxHookTimeoutSeconds * time.Second
)

// Input is what a hook sees. Tool events carry Call and, after the call,
// Result; the other events carry Session and, for UserInput and
// BeforeAgentStart, Prompt (docs/hooks.md). Each hook gets its own deep
// copy, so it may do with it what it likes.
type Input struct {
	Event     vocab.HookEvent
	Call      ToolCall
	Result    *ToolResult
	Session   SessionInfo
	Prompt    *Prompt
	Workspace WorkspaceInfo
	// Cwd is the agent's working directory, where it sends one.
	Cwd string
	// Params are the values of the hook's extension's paramRef; nil when
	// it has none.
	Params map[string]string
	// The payloads of the turn, model and stop events (events_payload.go).
	Turn     *Turn
	Model    *ModelInfo
	Request  *ModelRequest
	Response *ModelResponse
	Stop     *StopInfo

	// vars caches the CEL view of this input. The executor hands one Input to
	// all built-in handlers of a phase, so their CEL hooks convert it once.
	vars *celVars
}

// Verdict is a hook's decision. For a blocking event, Allowed false denies
// with Message as the reason; for an observing event it reports an audit
// finding, since those hooks cannot change anything. Ask, Arguments, Input
// and Context are set only where the event allows them (eventSpecs).
type Verdict struct {
	Allowed bool
	Message string
	// Ask: the agent asks its user, with Message; a headless agent denies.
	Ask bool
	// Arguments are merged into a BeforeToolCall's arguments.
	Arguments map[string]any
	// Input replaces a UserInput's prompt text.
	Input *string
	// Context is text added for the model.
	Context string
	// Summary is BeforeCompact's summary for the agent to keep.
	Summary *string
	// CustomMessage is a typed message for the agent to keep.
	CustomMessage *CustomMessage
}

// Handler evaluates a hook. It must return when ctx is done; if it does not,
// the host stops waiting anyway and treats the hook as timed out.
type Handler interface {
	Evaluate(ctx context.Context, in Input) (Verdict, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, in Input) (Verdict, error)

// Evaluate calls f.
func (f HandlerFunc) Evaluate(ctx context.Context, in Input) (Verdict, error) { return f(ctx, in) }

// builtinHandler marks the handlers of this package (CEL, webhook). They never
// mutate their input and bound themselves by the hook's timeout, so the
// executor runs them inline on one shared copy instead of a goroutine each:
// that is what keeps CEL hooks in the microsecond range.
type builtinHandler interface {
	Handler
	evaluateWithin(ctx context.Context, timeout time.Duration, in Input) (Verdict, error)
	describe(h *contract.Hook)
}

// Hook is a hook an extension registers with API.On.
type Hook struct {
	// Name identifies the hook in diagnostics; unique within an extension.
	Name string
	// Event is one of Events().
	Event vocab.HookEvent
	// Tools limits a tool event's hook to these tools: names or classes (shell, read,
	// write, edit, search, web), compared case-insensitively (package
	// toolclass); empty means every tool.
	Tools []string
	// Timeout bounds the wait; zero means DefaultTimeout, more than MaxTimeout
	// is cut to MaxTimeout.
	Timeout time.Duration
	// Handler decides.
	Handler Handler
	// Params are the hook's extension's parameters (CEL's `params`, a
	// webhook's review); nil when the extension has none.
	Params *contract.HookParams
	// Approval, on a BeforeToolCall hook, sends its asks to the cluster's
	// approvers (docs/hooks.md, "Approvals"); hostd acts on it.
	Approval *contract.HookApproval
	// RecordArguments: hostd's decision ledger records the arguments (or
	// prompt) of what the hook judges (its extension's recordArguments).
	RecordArguments bool
}

// boundHook is a committed hook: the author's Hook plus its extension id and
// its tool list resolved once into a matcher.
type boundHook struct {
	extension string
	// imposed: the hook's extension is platform policy imposed on the
	// Workspace; it runs after the hooks that are not.
	imposed bool
	// namespace is the extension's: where the text the hook adds comes
	// from (origin).
	namespace string
	hook      Hook
	tools     toolclass.Matcher
}

func bind(extension, namespace string, imposed bool, h Hook) boundHook {
	return boundHook{extension: extension, namespace: namespace, imposed: imposed, hook: h, tools: toolclass.NewMatcher(h.Tools)}
}

// matches reports whether the hook runs for a call of tool: the call's name
// matches an entry of match.tools in any case, or the entry is a class the
// tool belongs to (a hook on shell runs for bash, Bash and exec_command).
func (b boundHook) matches(tool string) bool {
	return len(b.hook.Tools) == 0 || b.tools.Match(tool)
}

func (b boundHook) timeout() time.Duration {
	return effectiveTimeout(b.hook.Timeout)
}

func effectiveTimeout(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return DefaultTimeout
	case d > MaxTimeout:
		return MaxTimeout
	default:
		return d
	}
}

// contract publishes the hook. Handlers from outside this package (Go
// functions) have no wire form: they appear by name only and run only where
// they were registered.
func (b boundHook) contract() contract.Hook {
	out := contract.Hook{
		Extension:      b.extension,
		Name:           b.hook.Name,
		Event:          string(b.hook.Event),
		Tools:          slices.Clone(b.hook.Tools),
		TimeoutSeconds: int32(b.timeout() / time.Second),
		Imposed:        b.imposed,
		Namespace:      b.namespace,
		Params:         cloneParams(b.hook.Params),
		Approval:       b.hook.Approval.Clone(),
	}
	if out.TimeoutSeconds < 1 {
		out.TimeoutSeconds = 1
	}
	out.RecordArguments = b.hook.RecordArguments
	if d, ok := b.hook.Handler.(builtinHandler); ok {
		d.describe(&out)
	}
	return out
}
