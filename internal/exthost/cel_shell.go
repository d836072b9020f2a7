package exthost

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/loadout-dev/loadout/internal/shell"
)

// The shell library: CEL functions that read a shell command line through
// a real parse (package shell), so a policy matches commands, never
// substrings (docs/hostd.md, Shell commands):
//
//	shell.commands(string) -> list(shell.Command)          (bash)
//	shell.commands(string, string) -> list(shell.Command)  (the line, the tool's name: its dialect)
//	shell.Command.name, .argv, .opaque, .reason, .via, .dialect
//	<shell.Command>.hasFlag(string, ...) -> bool   (one to eight names)
//	<shell.Command>.hasArg(string, ...) -> bool    (one to eight words)
//	<shell.Command>.mentions(string, ...) -> bool  (one to eight identifiers)
//
// A line that does not parse or breaks a bound of package shell makes
// shell.commands an error: the expression errs, so a before hook fails
// closed and an after hook reports an error.

// shellCommandType is shell.Command as CEL sees it (ext.NativeTypes names it
// after its Go package and type).
var shellCommandType = cel.ObjectType("shell.Command")

const (
	overloadShellCommands        = "shell_commands_string"
	overloadShellCommandsDialect = "shell_commands_string_string"
	// overloadHasFlag, overloadHasArg and overloadMentions are followed by
	// the number of names.
	overloadHasFlag  = "shell_command_has_flag_"
	overloadHasArg   = "shell_command_has_arg_"
	overloadMentions = "shell_command_mentions_"
	maxFlagNames     = 8
)

// shellMembers are the member functions of shell.Command that take one to
// maxFlagNames strings and answer a bool. hasArg and mentions read the
// command's words, which shell.commands has already paid to make (its
// argv budget), once per name; they are charged like hasFlag, per byte of
// the names.
var shellMembers = []struct {
	name, overload string
	fn             func(*shell.Command, ...string) bool
	perByte        uint64 // cost per byte of the names
}{
	{"hasFlag", overloadHasFlag, (*shell.Command).HasFlag, shellCostPerFlagByte},
	{"hasArg", overloadHasArg, (*shell.Command).HasArg, shellCostPerWordByte},
	{"mentions", overloadMentions, (*shell.Command).Mentions, shellCostPerWordByte},
}

// Costs, in CEL cost units (about 50 ns each): parsing a dense line costs
// 100 to 300 ns a byte, depending on load (BenchmarkCommands in
// internal/shell), making argv a few ns a byte. shell.commands is charged for the most work its input's
// size allows (shell.ParseBudget, shell.ArgvBudget), whatever the line
// holds, so the estimate before evaluating and the charge after agree.
const (
	shellCostPerParsedByte = 4
	shellArgvBytesPerCost  = 8
	// hasFlag looks each name's prefixes up among the command's long flags.
	shellCostPerFlagByte = 2
	// hasArg and mentions compare each name with the command's words.
	shellCostPerWordByte = 1
)

// shellCommandsCost is the cost of shell.commands on a string of n bytes.
func shellCommandsCost(n uint64) uint64 {
	if n > shell.MaxInput {
		n = shell.MaxInput // a longer line is refused before any work
	}
	return shellCostPerParsedByte*uint64(shell.ParseBudget(int(n))) + uint64(shell.ArgvBudget(int(n)))/shellArgvBytesPerCost
}

// shellLibrary declares the functions and their costs.
func shellLibrary() []cel.EnvOption {
	var estimates []checker.CostOption
	opts := []cel.EnvOption{ext.NativeTypes(reflect.TypeFor[shell.Command](), ext.ParseStructTags(true))}
	for _, m := range shellMembers {
		var overloads []cel.FunctionOpt
		for n := 1; n <= maxFlagNames; n++ {
			args := []*cel.Type{shellCommandType}
			for range n {
				args = append(args, cel.StringType)
			}
			id := fmt.Sprint(m.overload, n)
			overloads = append(overloads, cel.MemberOverload(id, args, cel.BoolType, cel.FunctionBinding(shellMember(m.fn))))
			estimates = append(estimates, checker.OverloadCostEstimate(id, estimateNames(m.perByte)))
		}
		opts = append(opts, cel.Function(m.name, overloads...))
	}
	estimates = append(estimates, checker.OverloadCostEstimate(overloadShellCommands, estimateShellCommands),
		checker.OverloadCostEstimate(overloadShellCommandsDialect, estimateShellCommands))
	return append(opts,
		cel.Function("shell.commands",
			cel.Overload(overloadShellCommands, []*cel.Type{cel.StringType}, cel.ListType(shellCommandType),
				cel.UnaryBinding(func(line ref.Val) ref.Val { return shellCommands(line, types.String("")) })),
			cel.Overload(overloadShellCommandsDialect, []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(shellCommandType),
				cel.BinaryBinding(shellCommands))),
		cel.CostEstimatorOptions(estimates...),
	)
}

// shellCostTrackers charge the same costs when cel-go tracks cost at run
// time (hostd does not: it proves the bound before evaluating).
func shellCostTrackers() cel.ProgramOption {
	commands := func(args []ref.Val, _ ref.Val) *uint64 {
		c := shellCommandsCost(0)
		if s, ok := args[0].(types.String); ok {
			c = shellCommandsCost(uint64(len(s)))
		}
		return &c
	}
	opts := []interpreter.CostTrackerOption{
		interpreter.OverloadCostTracker(overloadShellCommands, commands),
		interpreter.OverloadCostTracker(overloadShellCommandsDialect, commands),
	}
	for _, m := range shellMembers {
		for n := 1; n <= maxFlagNames; n++ {
			opts = append(opts, interpreter.OverloadCostTracker(fmt.Sprint(m.overload, n), func(args []ref.Val, _ ref.Val) *uint64 {
				c := uint64(1)
				for _, a := range args[1:] {
					if s, ok := a.(types.String); ok {
						c += m.perByte * uint64(len(s))
					}
				}
				return &c
			}))
		}
	}
	return cel.CostTrackerOptions(opts...)
}

// shellCommands: the commands of a line, in the dialect of the tool named
// by tool (shell.DialectOf: PowerShell for Claude Code's PowerShell tool,
// bash for the others and for the one-argument form).
func shellCommands(arg, tool ref.Val) ref.Val {
	s, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	t, ok := tool.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(tool)
	}
	cmds, err := shell.CommandsIn(shell.DialectOf(string(t)), string(s))
	if err != nil {
		return types.NewErr("shell.commands: %v", err)
	}
	vals := make([]ref.Val, len(cmds))
	for i := range cmds {
		vals[i] = commandVal{&cmds[i]}
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

// shellMember binds a member function of shell.Command taking names.
func shellMember(fn func(*shell.Command, ...string) bool) func(args ...ref.Val) ref.Val {
	return func(args ...ref.Val) ref.Val {
		c, ok := args[0].(commandVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(args[0])
		}
		names := make([]string, 0, len(args)-1)
		for _, a := range args[1:] {
			s, ok := a.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			names = append(names, string(s))
		}
		return types.Bool(fn(c.Command, names...))
	}
}

// commandVal is a shell.Command as a CEL value. ext.NativeTypes declares
// the type and reads its fields (from Value); making the values here avoids
// its per-value reflection, most of an evaluation's cost otherwise.
type commandVal struct{ *shell.Command }

var _ ref.Val = commandVal{}

// ConvertToNative implements ref.Val.
func (v commandVal) ConvertToNative(t reflect.Type) (any, error) {
	switch t {
	case reflect.TypeFor[shell.Command]():
		return *v.Command, nil
	case reflect.TypeFor[*shell.Command]():
		return v.Command, nil
	}
	return nil, fmt.Errorf("shell.Command cannot convert to %v", t)
}

// ConvertToType implements ref.Val.
func (v commandVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return shellCommandType
	}
	return types.NewErr("type conversion error from shell.Command to %s", t.TypeName())
}

// Equal implements ref.Val: two commands are equal when their argv are.
func (v commandVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(commandVal)
	return types.Bool(ok && slices.Equal(v.Argv, o.Argv))
}

// Type implements ref.Val.
func (v commandVal) Type() ref.Type { return shellCommandType }

// Value implements ref.Val.
func (v commandVal) Value() any { return v.Command }

// estimateShellCommands: the cost of the most work a string of the
// argument's size allows, and at most shell.MaxCommands commands.
func estimateShellCommands(e checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	n := sizeOf(e, args[0]).Max
	return &checker.CallEstimate{
		CostEstimate: checker.CostEstimate{Min: shellCommandsCost(0), Max: shellCommandsCost(n)},
		ResultSize:   &checker.SizeEstimate{Min: 0, Max: shell.MaxCommands},
	}
}

// estimateNames: 1 plus perByte a byte of the names (the arguments; the
// command is the target).
func estimateNames(perByte uint64) checker.FunctionEstimator {
	return func(e checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
		est := checker.CostEstimate{Min: 1, Max: 1}
		for _, a := range args {
			est = est.Add(sizeOf(e, a).MultiplyByCostFactor(float64(perByte)))
		}
		return &checker.CallEstimate{CostEstimate: est}
	}
}

// sizeOf is a node's size: exact for a constant, else the estimator's,
// else unbounded.
func sizeOf(e checker.CostEstimator, n checker.AstNode) checker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := e.EstimateSize(n); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}
