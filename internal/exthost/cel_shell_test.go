package exthost

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/shell"
)

// recursiveForceGuard is the samples' first platform guard, before it
// denied what it cannot see and every recursive delete
// (samplesGuard reads today's).
const recursiveForceGuard = "!shell.commands(call.arguments.command).exists(c, c.name == 'rm' && c.hasFlag('r', 'R', 'recursive') && c.hasFlag('f', 'force'))"

func shellCall(command any) Input {
	return Input{Event: vocab.BeforeToolCall, Call: ToolCall{ID: "c", Name: "bash", Arguments: map[string]any{"command": command}}}
}

// TestCELShell_GuardDeniesEveryRecursiveForceSpellingOnly_RLC3: a policy
// the product ships (config/samples/platform_extension_guard.yaml), written
// with the shell functions, denies a recursive force remove however it is
// spelled or wrapped, and allows the commands that only mention one.
func TestCELShell_GuardDeniesEveryRecursiveForceSpellingOnly_RLC3(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	for _, cmd := range []string{
		"rm -rf build", "rm -fr build", "rm -r -f build", "rm -Rf build", "rm --recursive --force build", "bash -c 'rm -rf x'",
		"/bin/rm -rf /", "env X=1 rm -rf /", "sudo rm -rf /", "cd /w && rm build -rf", "echo ok; (rm --rec --for x)",
		"sh -c \"bash -c 'rm -rf x'\"", "find . -exec rm -rf {} +", "echo 'rm -rf /' | sh", "x=$(rm -rf y)", "rm -{r,f} x",
		"rm -r build", "git rm -rf x",
	} {
		if v, err := h.Evaluate(context.Background(), shellCall(cmd)); err != nil || v.Allowed {
			t.Errorf("%q: %+v, %v; want denied", cmd, v, err)
		}
	}
	for _, cmd := range []string{"grep -rn 'rm -rf' docs", `echo "rm -rf"`, "ls -la", "rm build.log", "git rm --cached -r x", "rmdir build"} {
		if v, err := h.Evaluate(context.Background(), shellCall(cmd)); err != nil || !v.Allowed {
			t.Errorf("%q: %+v, %v; want allowed", cmd, v, err)
		}
	}
}

// TestCELShell_FunctionsFieldsAndTypes: what the functions return, and the
// type checker refusing misuse at compile time.
func TestCELShell_FunctionsFieldsAndTypes(t *testing.T) {
	in := shellCall(`FOO=1 /usr/bin/sudo -u root rm -r --force "a b" | tee log`)
	for _, expr := range []string{
		"shell.commands(call.arguments.command).size() == 3",
		"shell.commands(call.arguments.command).map(c, c.name) == ['sudo', 'rm', 'tee']",
		"shell.commands(call.arguments.command)[1].argv == ['rm', '-r', '--force', 'a b']",
		"shell.commands(call.arguments.command)[0].argv[0] == '/usr/bin/sudo'",
		"shell.commands(call.arguments.command)[1].hasFlag('r')",
		"shell.commands(call.arguments.command)[1].hasFlag('x', '--force')",
		"!shell.commands(call.arguments.command)[1].hasFlag('a', 'b', 'forc')",          // --force is not --forc
		"shell.commands(call.arguments.command)[1].hasFlag('a', 'b', 'c', 'force-all')", // --force may abbreviate it
		"!shell.commands(call.arguments.command)[2].hasFlag('r')",
		"shell.commands('').size() == 0",
	} {
		v, err := mustCEL(t, vocab.BeforeToolCall, expr).Evaluate(context.Background(), in)
		if err != nil || !v.Allowed {
			t.Errorf("%s: %+v, %v", expr, v, err)
		}
	}
	for _, expr := range []string{
		"shell.commands(1).size() == 0",
		"'rm'.hasFlag('r')",
		"shell.commands('x')[0].hasFlag('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i')",
		"shell.commands('x')[0].mentions(1)",
		"shell.commands('x', 1)",
		"shell.commands('x')[0].hasArg()",
		"shell.commands('x')[0].hasFlag(1)",
		"shell.commands('x')[0].env == 'y'",
		"shell.commands('x')[0].name",
	} {
		if _, err := CompileCEL(vocab.BeforeToolCall, expr, ""); err == nil {
			t.Errorf("%s compiled", expr)
		}
	}
	if _, err := CompileCEL(vocab.AfterToolResult, "shell.commands(call.arguments.command).size() > 0 && !result.isError", ""); err != nil {
		t.Errorf("after hooks have the functions too: %v", err)
	}
}

// TestCELShell_CommandThatDoesNotParseFailsClosed_RHK3: a command line that
// does not parse, breaks a bound or is not a string makes the expression an
// error: a before hook blocks the call with a diagnostic naming why, an
// after hook reports an error.
func TestCELShell_CommandThatDoesNotParseFailsClosed_RHK3(t *testing.T) {
	for _, tc := range []struct {
		command any
		why     string
	}{
		{"rm -rf 'build", "not understood"},
		{"(rm -rf x", "not understood"},
		{strings.Repeat("a", shell.MaxInput+1), "over the limit"},
		{strings.Repeat("(", 500) + "x" + strings.Repeat(")", 500), "too deeply"},
		{[]any{"bash", "-lc", "rm -rf x"}, "no such overload"}, // Codex's model-facing shell passes a list
		{nil, "no such overload"},
	} {
		h := newTestHost()
		mustLoad(t, h, factorySource("platform-guard", nil, hookFactory(Hook{Name: "no-recursive-delete", Event: vocab.BeforeToolCall,
			Tools: []string{"shell"}, Handler: mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))})))
		audit := mustCEL(t, vocab.AfterToolResult, samplesGuard(t))
		mustLoad(t, h, factorySource("audit", nil, hookFactory(Hook{Name: "audit", Event: vocab.AfterToolResult, Handler: audit})))
		core := &coreCounter{}
		c := ToolCall{ID: "c1", Name: "Bash", Arguments: map[string]any{"command": tc.command}}
		r, diags := h.Execute(context.Background(), c, core.run)
		assertPaired(t, c, r)
		if core.calls.Load() != 0 || len(diags) != 1 || diags[0].Kind != DiagnosticError || !strings.Contains(diags[0].Message, tc.why) {
			t.Errorf("%.40v: core ran %d times, diagnostics %+v; want blocked with an error saying %q", tc.command, core.calls.Load(), diags, tc.why)
		}
		diags = h.After(context.Background(), ToolCall{ID: "c2", Name: "Read", Arguments: c.Arguments}, ToolResult{ToolCallID: "c2", ToolName: "Read"})
		if len(diags) != 1 || diags[0].Kind != DiagnosticError {
			t.Errorf("%.40v: after hook diagnostics %+v, want one error", tc.command, diags)
		}
	}
}

// TestCELShell_CostIsDeclaredAndBoundsTheTrackedCost_RHK7: the functions
// declare their cost to cel-go's estimator, so the samples' guard is proven
// under the cost limit for every input hostd accepts and is never refused;
// the bound it proves is never below what cel-go's tracker charges; and a
// costlier guard over a long command is refused before it runs.
func TestCELShell_CostIsDeclaredAndBoundsTheTrackedCost_RHK7(t *testing.T) {
	h, err := compileCEL(vocab.BeforeToolCall, samplesGuard(t), "")
	if err != nil {
		t.Fatal(err)
	}
	guard := h.(*celHandler)
	bound := guard.estimate(MaxInputSize)
	t.Logf("the samples' guard: a proven bound of %d for every input", bound)
	if !guard.static || bound > CELCostLimit || bound < shellCommandsCost(shell.MaxInput) {
		t.Fatalf("guard: static %v, bound %d; want a static bound under %d that covers parsing", guard.static, bound, CELCostLimit)
	}
	tracked, err := guard.env.Program(guard.ast, cel.CostTracking(nil), shellCostTrackers())
	if err != nil {
		t.Fatal(err)
	}
	for name, cmd := range map[string]string{
		"short":      "rm -rf build",
		"dense":      strings.Repeat("rm -r -f x; ", shell.MaxInput/12),
		"commands":   strings.Repeat("a;", shell.MaxCommands),
		"flags":      "rm " + strings.Repeat("-r --force ", shell.MaxInput/12),
		"nested":     `bash -c "sudo sh -c 'env X=1 nice rm -rf /'"`,
		"unparsable": "rm -rf 'x",
		"over limit": strings.Repeat("a", shell.MaxInput+10),
	} {
		in := shellCall(cmd)
		_, det, _ := tracked.Eval(newCELVars(&in))
		if actual := *det.ActualCost(); actual > bound {
			t.Errorf("%s: tracked cost %d over the proven bound %d", name, actual, bound)
		}
		if _, err := h.Evaluate(context.Background(), in); errors.As(err, new(*CostLimitError)) {
			t.Errorf("%s: the static guard was refused: %v", name, err)
		}
	}

	// Reading every word of every command is estimated at the call's size:
	// fine for a short command, refused unevaluated for a long one.
	costly := mustCEL(t, vocab.BeforeToolCall, "shell.commands(call.arguments.command).all(c, c.argv.all(a, a.size() < 1000))")
	if v, err := costly.Evaluate(context.Background(), shellCall("ls -la")); err != nil || !v.Allowed {
		t.Errorf("costly guard, short command: %+v, %v", v, err)
	}
	var limit *CostLimitError
	if _, err := costly.Evaluate(context.Background(), shellCall(strings.Repeat("ls -la; ", 6000))); !errors.As(err, &limit) {
		t.Errorf("costly guard, long command: %v, want a CostLimitError", err)
	}
}

// BenchmarkCEL_RecursiveForceGuard: the samples' guard on a typical shell
// call, against the substring test it replaced (docs/benchmarks.md).
func BenchmarkCEL_RecursiveForceGuard(b *testing.B) {
	in := shellCall("cd /work && grep -rn TODO docs | head -20 && make build")
	for _, g := range []struct{ name, expr string }{
		{"substring", "!call.arguments.command.contains('rm -rf')"},
		{"shell.commands", recursiveForceGuard},
		{"samples", samplesGuard(b)},
	} {
		h := mustCEL(b, vocab.BeforeToolCall, g.expr)
		b.Run(g.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v, err := h.Evaluate(context.Background(), in); err != nil || !v.Allowed {
					b.Fatal(v, err)
				}
			}
		})
	}
}
