package contentpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/celcost"
)

// Bounds of a rule. The parse bounds are a hook's (internal/exthost), which
// keep type-checking cheap. The cost limit is fifty times a hook's: a hook
// runs at every tool call over arguments of a few kilobytes, a rule once
// per resolution over a skill that may fill a context (up to 900 KiB), and
// cel-go's estimate of a regular expression over a string is its length
// times the pattern's (RE2 itself is linear): the sample rules over a
// skill of 900 KiB of text stay under it, a rule quadratic in a skill's
// lines does not (TestRules_BadRulesAndCostBound, BenchmarkSampleRules).
const (
	CostLimit  = 50_000_000
	MaxLength  = 4096
	MaxNesting = 32
)

// Rule is one content rule and who declared it.
type Rule struct {
	// Source names the declaring extension, namespace/name.
	Source string
	v1alpha1.ContentRule
}

// ID is how refusals name the rule: source/name.
func (r Rule) ID() string { return r.Source + "/" + r.Name }

type compiled struct {
	Rule
	env     *cel.Env
	ast     *cel.Ast
	program cel.Program
	bounds  celcost.Bounds
}

// Rules are compiled content rules; nil or empty allows everything.
type Rules struct {
	skill, tool []*compiled
	digest      string
}

var envs = map[v1alpha1.ContentTarget]*cel.Env{}

func init() {
	for target, variable := range map[v1alpha1.ContentTarget]string{v1alpha1.ContentTargetSkill: "skill", v1alpha1.ContentTargetTool: "tool"} {
		env, err := cel.NewEnv(
			cel.Variable(variable, cel.MapType(cel.StringType, cel.DynType)),
			ext.Strings(),
			ext.Bindings(),
			cel.ParserRecursionLimit(MaxNesting),
			cel.ParserExpressionSizeLimit(MaxLength),
		)
		if err != nil {
			panic(err)
		}
		envs[target] = env
	}
}

// Compile compiles rules, naming each that does not compile: a CEL error,
// a result that is not a bool, an unknown target.
func Compile(rules []Rule) (*Rules, error) {
	out := &Rules{}
	var errs []error
	for _, r := range rules {
		c, err := compile(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("content rule %s: %w", r.ID(), err))
			continue
		}
		if r.Target == v1alpha1.ContentTargetSkill {
			out.skill = append(out.skill, c)
		} else {
			out.tool = append(out.tool, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(rules) > 0 {
		b, _ := json.Marshal(rules) // plain fields always marshal
		sum := sha256.Sum256(b)
		out.digest = hex.EncodeToString(sum[:])
	}
	return out, nil
}

// Check compiles one rule alone: the Extension's Valid condition.
func Check(r v1alpha1.ContentRule) error {
	_, err := compile(Rule{ContentRule: r})
	return err
}

func compile(r Rule) (*compiled, error) {
	env, ok := envs[r.Target]
	if !ok {
		return nil, fmt.Errorf("target %q is neither Skill nor Tool", r.Target)
	}
	parsed, err := celcost.Parse(env, r.Expression, MaxLength, MaxNesting)
	if err != nil {
		return nil, err
	}
	ast, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("expression is a %s; it must be a bool (true allows)", ast.OutputType())
	}
	program, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, err
	}
	return &compiled{Rule: r, env: env, ast: ast, program: program}, nil
}

// Empty reports whether there are no rules.
func (r *Rules) Empty() bool { return r == nil || len(r.skill)+len(r.tool) == 0 }

// Digest identifies the rules ("" for none): the platform's policy digest
// covers it, so a changed rule re-resolves every Workspace it applies to.
func (r *Rules) Digest() string {
	if r == nil {
		return ""
	}
	return r.digest
}

// evaluate runs c over vars: false, an error, a result that is not a
// bool, or a worst case over the cost limit is a refusal (fail closed).
// The worst case is estimated before evaluating, first over the size of
// the content's largest value alone (memoised per size class), then, when
// that is over, from the size of each value the rule reads (sizes).
func (c *compiled) evaluate(vars map[string]any, sizes sizes) (bool, string) {
	if c.bounds.Bound(c.env, c.ast, sizes.max) > CostLimit {
		if cost := celcost.EstimateWith(c.env, c.ast, sizes); cost > CostLimit {
			return false, fmt.Sprintf("the rule's worst-case cost over this content (largest value %d elements) is over the cost limit of %d; refused without evaluating", sizes.max, CostLimit)
		}
	}
	out, _, err := c.program.Eval(vars)
	if err != nil {
		return false, "the rule failed: " + err.Error()
	}
	allowed, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Sprintf("the rule returned %v, not a bool", out.Value())
	}
	if !allowed {
		return false, c.Message
	}
	return true, ""
}
