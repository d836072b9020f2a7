package exthost

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
)

// CEL limits. CELCostLimit is the per-evaluation runtime cost budget, the
// same as Kubernetes' per-expression limit for ValidatingAdmissionPolicy; an
// evaluation over it stops with an error and, for a before hook, fails closed.
const (
	CELCostLimit = 1_000_000
	// celInterruptEvery makes comprehensions check for a hook timeout this often.
	celInterruptEvery = 100
)

// Two environments: `result` exists only for after hooks, so a before hook
// that reads it is a compile error at load instead of a failure at call time.
var celEnvs = sync.OnceValues(func() (map[v1alpha1.HookEvent]*cel.Env, error) {
	base := []cel.EnvOption{
		cel.Variable("call", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("workspace", cel.MapType(cel.StringType, cel.StringType)),
		ext.Strings(),
		ext.Lists(),
	}
	before, err := cel.NewEnv(base...)
	if err != nil {
		return nil, err
	}
	after, err := before.Extend(cel.Variable("result", cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		return nil, err
	}
	return map[v1alpha1.HookEvent]*cel.Env{eventBefore: before, eventAfter: after}, nil
})

// celHandler is a compiled CEL hook: compiled once at load, evaluated per call.
type celHandler struct {
	expression string
	message    string
	program    cel.Program
}

// CompileCEL compiles a ValidatingAdmissionPolicy-style hook: expression must
// yield a bool, true allows; message explains a denial. Variables: call (id,
// name, arguments), workspace (name, namespace) and, for AfterToolResult,
// result (toolCallId, toolName, isError, content, details).
func CompileCEL(event v1alpha1.HookEvent, expression, message string) (Handler, error) {
	envs, err := celEnvs()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	env, ok := envs[event]
	if !ok {
		return nil, fmt.Errorf("unknown hook event %q", event)
	}
	ast, iss := env.Compile(expression)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("expression must evaluate to bool, not %s", t)
	}
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize),
		cel.CostLimit(CELCostLimit),
		cel.InterruptCheckFrequency(celInterruptEvery),
	)
	if err != nil {
		return nil, err
	}
	return &celHandler{expression: expression, message: message, program: prg}, nil
}

// Evaluate runs the program. CEL values are immutable, so the input is read in
// place; a runtime error (no such key, cost limit, interruption) is returned
// and the executor fails the call closed.
func (c *celHandler) Evaluate(ctx context.Context, in Input) (Verdict, error) {
	vars := map[string]any{
		"call":      callValue(in.Call),
		"workspace": map[string]string{"name": in.Workspace.Name, "namespace": in.Workspace.Namespace},
	}
	if in.Result != nil {
		vars["result"] = resultValue(*in.Result)
	}
	out, _, err := c.program.ContextEval(ctx, vars)
	if err != nil {
		return Verdict{}, err
	}
	allowed, ok := out.Value().(bool)
	if !ok {
		return Verdict{}, errors.New("expression did not evaluate to bool")
	}
	if allowed {
		return Verdict{Allowed: true}, nil
	}
	msg := c.message
	if msg == "" {
		msg = "failed expression: " + c.expression
	}
	return Verdict{Message: msg}, nil
}

func (c *celHandler) describe(h *contract.Hook) {
	h.CEL = &contract.CELHook{Expression: c.expression, Message: c.message}
}

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
