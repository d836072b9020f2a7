package exthost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/celcost"
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
	reg, err := types.NewRegistry()
	if err != nil {
		return nil, err
	}
	opts := []cel.EnvOption{
		cel.ParserRecursionLimit(CELMaxNesting),
		cel.ParserExpressionSizeLimit(CELMaxLength),
		// The hook object types (cel_decls.go) on top of CEL's own.
		cel.CustomTypeAdapter(reg),
		cel.CustomTypeProvider(newCELDeclProvider(reg)),
		ext.Strings(),
		ext.Lists(),
	}
	// Every hook sees where it runs: the workspace, the session (with the
	// agent or subagent that acts), the working directory, its extension's
	// parameters and whether the kernel holds the agent to a declared
	// sandbox (WorkspaceInfo.Sandboxed).
	for _, v := range celCommonVariables {
		opts = append(opts, cel.Variable(v.Name, v.Type))
	}
	base, err := cel.NewEnv(append(opts, shellLibrary()...)...)
	if err != nil {
		return nil, err
	}
	envs := make(map[vocab.HookEvent]*cel.Env, len(celEventVariables))
	for event, vars := range celEventVariables {
		var add []cel.EnvOption
		for _, v := range vars {
			add = append(add, cel.Variable(v.Name, v.Type))
		}
		if envs[event], err = base.Extend(add...); err != nil {
			return nil, err
		}
	}
	return envs, nil
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
	// bounds memoises costBound per size class (celcost.Classes reach
	// MaxInputSize).
	bounds celcost.Bounds
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
	return celcost.Parse(env, expression, CELMaxLength, CELMaxNesting)
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
