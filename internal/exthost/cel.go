package exthost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// CEL limits. CELCostLimit is the per-evaluation cost budget, the same as
// Kubernetes' per-expression limit for ValidatingAdmissionPolicy; an
// evaluation over it stops with an error and, for a before hook, fails closed.
const (
	CELCostLimit = 1_000_000
	// celInterruptEvery makes comprehensions check for a hook timeout this often.
	celInterruptEvery = 100

	// Parse and type-check bounds. Type-checking is not linear in an
	// expression's length: 3 kB of chained .map(a,[a,a]) nests list types
	// 240 deep and took 22 s and 11 GB to check. The parser refuses nesting
	// deeper than CELMaxNesting (calls, members, literals, operators) and
	// expressions longer than CELMaxLength code points, so what reaches the
	// checker is small; CELCompileDeadline is the backstop.
	CELMaxNesting      = 32
	CELMaxLength       = 4096
	CELCompileDeadline = 2 * time.Second
)

// One environment per kind of payload (docs/hooks.md): a variable exists only
// where the event has it (`result` after a tool call, `prompt` at UserInput
// and BeforeAgentStart), so a hook that reads one its event lacks is a
// compile error at load instead of a failure at call time.
var celEnvs = sync.OnceValues(func() (map[vocab.HookEvent]*cel.Env, error) {
	text := cel.MapType(cel.StringType, cel.StringType)
	object := cel.MapType(cel.StringType, cel.DynType)
	base, err := cel.NewEnv(append([]cel.EnvOption{
		cel.ParserRecursionLimit(CELMaxNesting),
		cel.ParserExpressionSizeLimit(CELMaxLength),
		cel.Variable("workspace", text),
		// Every hook sees where it runs: the session (with the agent or
		// subagent that acts), the working directory and its extension's
		// parameters.
		cel.Variable("session", text),
		cel.Variable("cwd", cel.StringType),
		cel.Variable("params", text),
		ext.Strings(),
		ext.Lists(),
	}, shellLibrary()...)...)
	if err != nil {
		return nil, err
	}
	extend := func(vars ...cel.EnvOption) *cel.Env {
		if err != nil {
			return nil
		}
		var env *cel.Env
		env, err = base.Extend(vars...)
		return env
	}
	before := extend(cel.Variable("call", object))
	after := extend(cel.Variable("call", object), cel.Variable("result", object))
	prompt := extend(cel.Variable("prompt", text))
	turn := extend(cel.Variable("turn", object))
	model := extend(cel.Variable("model", text))
	response := extend(cel.Variable("model", text), cel.Variable("response", text))
	stop := extend(cel.Variable("stop", object))
	if err != nil {
		return nil, err
	}
	return map[vocab.HookEvent]*cel.Env{
		vocab.SessionStart: base, vocab.UserInput: prompt, vocab.BeforeAgentStart: prompt,
		vocab.TurnStart: turn, vocab.BeforeModelRequest: model, vocab.AfterModelResponse: response,
		vocab.BeforeToolCall: before, vocab.AfterToolResult: after, vocab.ToolFailure: after,
		vocab.TurnEnd: turn, vocab.Stop: stop,
		vocab.BeforeCompact: base, vocab.SessionEnd: base,
	}, nil
})

// celHandler is a compiled CEL hook: compiled once at load, evaluated per call.
type celHandler struct {
	event      vocab.HookEvent
	expression string
	message    string
	program    cel.Program
	env        *cel.Env
	ast        *cel.Ast
	// static is set when the cost bound holds for every input hostd accepts.
	static bool
	// bounds memoises costBound per size class, stored plus one (0: unknown);
	// 44 classes reach MaxInputSize.
	bounds [44]atomic.Uint64
	// loops is set when the expression has a comprehension (all, exists, map,
	// filter…): only those can run long, and only they poll for a timeout.
	// Everything else is bounded by its size and the cost limit, and skips the
	// context machinery that would otherwise dominate a microsecond evaluation.
	loops bool
}

// CompileCEL compiles a ValidatingAdmissionPolicy-style hook: expression
// yields a bool (true allows) or a map of outcomes the event allows
// (docs/hooks.md); message explains a denial that carries none. Variables:
// workspace (name, namespace) and, by event, call (id, name, arguments),
// result (toolCallId, toolName, isError, content, details), session (id,
// reason) and prompt (text, source).
//
// Results are memoised: the controller loads the same platform extension for
// every Workspace that reads the platform namespace, on every reconcile, and
// a compiled program is immutable and safe for concurrent use.
func CompileCEL(event vocab.HookEvent, expression, message string) (Handler, error) {
	return celPrograms.get(celKey{event, expression, message}, func() (Handler, error) {
		return compileWithin(CELCompileDeadline, func() (Handler, error) { return compileCEL(event, expression, message) })
	})
}

// errCompileDeadline is a compilation that outlived CELCompileDeadline. It is
// not memoised: on a starved machine a fine expression may hit it once.
var errCompileDeadline = fmt.Errorf("compiling the expression took longer than %s; simplify it", CELCompileDeadline)

// compileWithin returns compile's result, or errCompileDeadline after d. The
// parse limits keep every compilation far below d, so a compilation left
// running in the background past it is a bug to fix, not a load to expect.
func compileWithin(d time.Duration, compile func() (Handler, error)) (Handler, error) {
	type result struct {
		h   Handler
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := compile()
		done <- result{h, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.h, r.err
	case <-timer.C:
		return nil, errCompileDeadline
	}
}

// celEnv is the environment of event's hooks.
func celEnv(event vocab.HookEvent) (*cel.Env, error) {
	envs, err := celEnvs()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	env, ok := envs[event]
	if !ok {
		return nil, fmt.Errorf("unknown hook event %q", event)
	}
	return env, nil
}

// parseCEL parses expression within the bounds, naming a bound it breaks.
func parseCEL(env *cel.Env, expression string) (*cel.Ast, error) {
	if n := utf8.RuneCountInString(expression); n > CELMaxLength {
		return nil, fmt.Errorf("expression is %d characters, more than the limit of %d", n, CELMaxLength)
	}
	ast, iss := env.Parse(expression)
	if err := iss.Err(); err != nil {
		if strings.Contains(err.Error(), "recursion") {
			return nil, fmt.Errorf("expression nests deeper than %d levels (calls, fields, literals, operators); split it or flatten it: %w", CELMaxNesting, err)
		}
		return nil, err
	}
	return ast, nil
}

// CheckCELSyntax parses a hook expression without type-checking it: the
// cheap check for extensions that cannot load where they are (an untrusted
// namespace) and so are never compiled.
func CheckCELSyntax(event vocab.HookEvent, expression string) error {
	env, err := celEnv(event)
	if err != nil {
		return err
	}
	_, err = parseCEL(env, expression)
	return err
}

func compileCEL(event vocab.HookEvent, expression, message string) (Handler, error) {
	env, err := celEnv(event)
	if err != nil {
		return nil, err
	}
	parsed, err := parseCEL(env, expression)
	if err != nil {
		return nil, err
	}
	ast, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if err := checkOutcomeType(event, ast); err != nil {
		return nil, err
	}
	loops := len(celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.ComprehensionKind))) > 0
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), shellCostTrackers()}
	if loops {
		opts = append(opts, cel.InterruptCheckFrequency(celInterruptEvery))
	}
	h := &celHandler{event: event, expression: expression, message: message, loops: loops, env: env, ast: ast}
	// The cost bound (rule R-HK-7) is proven before evaluating, never tracked
	// while evaluating: cel-go's runtime cost tracker is quadratic in the
	// length of a comprehension (20k list items took 2 s), so each call's
	// worst case is estimated from the size of its largest value instead
	// (costBound). An expression under the limit even over maximal inputs
	// needs no per-call check at all.
	h.static = h.estimate(MaxInputSize) <= CELCostLimit
	if h.program, err = env.Program(ast, opts...); err != nil {
		return nil, err
	}
	return h, nil
}

// estimate is the worst-case cost of the expression when no value it reads
// (string, list or map) is larger than size; a failed estimate counts as
// over every limit, so such an expression is never evaluated unbounded.
func (c *celHandler) estimate(size uint64) uint64 {
	est, err := c.env.EstimateCost(c.ast, inputSizeEstimator{size})
	if err != nil {
		return math.MaxUint64
	}
	return est.Max
}

// costBound returns the worst-case cost of evaluating the expression on an
// input whose largest value has size elements. Estimates are memoised per
// size class (below), so a call pays for an estimate only the first time its
// class is seen.
func (c *celHandler) costBound(size uint64) uint64 {
	class, upper := sizeClass(size)
	if class >= len(c.bounds) {
		return math.MaxUint64
	}
	if b := c.bounds[class].Load(); b != 0 {
		return b - 1
	}
	b := c.estimate(upper)
	if b != math.MaxUint64 {
		c.bounds[class].Store(b + 1)
	}
	return b
}

// sizeClass maps size to a class and the class's largest size. Classes are
// half powers of two ([2^k, 1.5·2^k) and [1.5·2^k, 2^(k+1))), so a class
// over-states a size by less than 1.5×: a call is refused only when values
// at most 1.5× its own would exceed the limit.
func sizeClass(size uint64) (class int, upper uint64) {
	if size < 4 {
		return int(size), size
	}
	n := bits.Len64(size) // size is in [2^(n-1), 2^n)
	if mid := uint64(3) << (n - 2); size < mid {
		return 2 * n, mid - 1
	}
	return 2*n + 1, 1<<n - 1
}

type celKey struct {
	event               vocab.HookEvent
	expression, message string
}

type celResult struct {
	handler Handler
	err     error
}

// celCache memoises compilations, errors included (a bad expression stays
// bad). It holds at most celCacheSize entries and starts over when full:
// expressions change rarely, so a full cache means stale entries, and
// recompiling the live ones once is cheap next to unbounded growth.
type celCache struct {
	mu      sync.Mutex
	entries map[celKey]celResult
}

const celCacheSize = 4096

var celPrograms = &celCache{}

func (c *celCache) get(k celKey, compile func() (Handler, error)) (Handler, error) {
	c.mu.Lock()
	r, ok := c.entries[k]
	c.mu.Unlock()
	if ok {
		return r.handler, r.err
	}
	h, err := compile() // outside the lock: compiling takes tens of microseconds
	if errors.Is(err, errCompileDeadline) {
		return h, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= celCacheSize {
		c.entries = make(map[celKey]celResult)
	}
	c.entries[k] = celResult{h, err}
	return h, err
}

// MaxInputSize is the largest size (string length, list or map entries) of
// any value of a call or result: hostd refuses larger request bodies, so no
// value it evaluates can be larger.
const MaxInputSize = 1 << 20

// inputSizeEstimator sizes every variable-dependent value at max.
type inputSizeEstimator struct{ max uint64 }

func (e inputSizeEstimator) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: e.max}
}

func (inputSizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// CostLimitError is a call refused before evaluation because the
// expression's worst case over values of its size exceeds CELCostLimit.
type CostLimitError struct {
	Size, Cost uint64
}

func (e *CostLimitError) Error() string {
	if e.Cost == math.MaxUint64 {
		return fmt.Sprintf("the expression's cost over this call (largest value %d elements) cannot be bounded under the cost limit of %d; refused without evaluating", e.Size, CELCostLimit)
	}
	return fmt.Sprintf("the expression's worst-case cost over this call (largest value %d elements) is %d, over the cost limit of %d; refused without evaluating", e.Size, e.Cost, CELCostLimit)
}

// Evaluate runs the program until ctx is done. CEL values are immutable, so
// the input is read in place; a runtime error (no such key, cost limit,
// interruption) is returned and the executor fails the call closed.
func (c *celHandler) Evaluate(ctx context.Context, in Input) (Verdict, error) {
	return c.eval(ctx, in)
}

func (c *celHandler) evaluateWithin(ctx context.Context, timeout time.Duration, in Input) (Verdict, error) {
	if c.loops {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return c.eval(ctx, in)
}

// eval evaluates the program; only expressions with loops watch ctx.
func (c *celHandler) eval(ctx context.Context, in Input) (Verdict, error) {
	vars := in.vars
	if vars == nil {
		vars = newCELVars(&in)
	}
	var act interpreter.Activation = vars
	if in.Params != nil {
		act = paramsActivation{vars: vars, params: in.Params}
	}
	if !c.static {
		size := max(vars.largestValue(), largestParam(in.Params))
		if cost := c.costBound(size); cost > CELCostLimit {
			return Verdict{}, &CostLimitError{Size: size, Cost: cost}
		}
	}
	var out ref.Val
	var err error
	if c.loops {
		out, _, err = c.program.ContextEval(ctx, act)
	} else {
		out, _, err = c.program.Eval(act)
	}
	if err != nil {
		return Verdict{}, err
	}
	if allowed, ok := out.Value().(bool); ok {
		if allowed {
			return Verdict{Allowed: true}, nil
		}
		return Verdict{Message: c.denial()}, nil
	}
	return verdictFromCEL(c.event, out, c.denial())
}

// denial is the message of a denial that names none.
func (c *celHandler) denial() string {
	if c.message != "" {
		return c.message
	}
	return "failed expression: " + c.expression
}

func (c *celHandler) describe(h *contract.Hook) {
	h.CEL = &contract.CELHook{Expression: c.expression, Message: c.message}
}

// celVars is the CEL activation of one Input: call, workspace and, after the
// call, result. Each variable is converted on first use and then reused by
// every CEL hook of the call; CEL adapts nested values lazily, so a hook that
// reads one argument does not pay for converting all of them. Built-in
// handlers run one after another, so no lock is needed.
type celVars struct {
	in                                       *Input
	call, workspace, result, session, prompt ref.Val
	turn, model, response, stop              ref.Val
	// largest is largestValue plus one, 0 until computed.
	largest uint64
}

// largestValue is the size of the largest value the expression can read:
// string bytes (at least its length in code points, which CEL counts), list
// elements or map entries, map keys included. It is an upper bound for every
// size the cost estimate assumes, found in one pass over the input.
func (v *celVars) largestValue() uint64 {
	if v.largest == 0 {
		se := v.in.Session
		m := largestIn(v.in.Call.ID, v.in.Call.Name, v.in.Call.Arguments, v.in.Workspace.Name, v.in.Workspace.Namespace,
			se.ID, se.Reason, se.Agent, se.AgentID, se.AgentType, v.in.Cwd)
		if p := v.in.Prompt; p != nil {
			m = max(m, largestIn(p.Text, p.Source))
		}
		m = max(m, v.in.payloadLargest())
		if r := v.in.Result; r != nil {
			m = max(m, uint64(len(r.Content)), largestIn(r.ToolCallID, r.ToolName, r.Details))
			for _, c := range r.Content {
				m = max(m, largestIn(c.Type, c.Text, c.Data, c.MimeType))
			}
		}
		v.largest = m + 1
	}
	return v.largest - 1
}

// largestIn returns the size of the largest value among values and
// everything they contain.
func largestIn(values ...any) uint64 {
	var m uint64
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			m = max(m, uint64(len(x)))
		case []any:
			m = max(m, uint64(len(x)))
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			m = max(m, uint64(len(x)))
			for k, e := range x {
				m = max(m, uint64(len(k)))
				walk(e)
			}
		}
	}
	for _, x := range values {
		walk(x)
	}
	return m
}

var _ interpreter.Activation = (*celVars)(nil)

func newCELVars(in *Input) *celVars { return &celVars{in: in} }

// ResolveName implements interpreter.Activation.
func (v *celVars) ResolveName(name string) (any, bool) {
	a := types.DefaultTypeAdapter
	switch name {
	case "call":
		if v.call == nil {
			v.call = types.NewStringInterfaceMap(a, callValue(v.in.Call))
		}
		return v.call, true
	case "workspace":
		if v.workspace == nil {
			ws := v.in.Workspace
			v.workspace = types.NewStringStringMap(a, map[string]string{"name": ws.Name, "namespace": ws.Namespace})
		}
		return v.workspace, true
	case "session":
		if v.session == nil {
			v.session = types.NewStringStringMap(a, sessionValue(v.in.Session))
		}
		return v.session, true
	case "cwd":
		return types.String(v.in.Cwd), true
	case "params":
		// Each hook's own (paramsActivation); a hook of an extension
		// without a paramRef sees an empty map.
		return types.NewStringStringMap(a, v.in.Params), true
	case "turn", "model", "response", "stop":
		return v.resolvePayload(name)
	case "prompt":
		if v.in.Prompt == nil {
			return nil, false
		}
		if v.prompt == nil {
			v.prompt = types.NewStringStringMap(a, map[string]string{"text": v.in.Prompt.Text, "source": v.in.Prompt.Source})
		}
		return v.prompt, true
	case "result":
		if v.in.Result == nil {
			return nil, false
		}
		if v.result == nil {
			v.result = types.NewStringInterfaceMap(a, resultValue(*v.in.Result))
		}
		return v.result, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (v *celVars) Parent() interpreter.Activation { return nil }

var emptyArgs = map[string]any{}

func callValue(c ToolCall) map[string]any {
	args := c.Arguments
	if args == nil {
		args = emptyArgs
	}
	return map[string]any{"id": c.ID, "name": c.Name, "arguments": args}
}

func resultValue(r ToolResult) map[string]any {
	content := make([]any, len(r.Content))
	for i, c := range r.Content {
		m := map[string]any{"type": c.Type, "text": c.Text}
		if c.Data != "" {
			m["data"], m["mimeType"] = c.Data, c.MimeType
		}
		content[i] = m
	}
	details := r.Details
	if details == nil {
		details = emptyArgs
	}
	return map[string]any{
		"toolCallId": r.ToolCallID, "toolName": r.ToolName, "isError": r.IsError,
		"content": content, "details": details,
	}
}
