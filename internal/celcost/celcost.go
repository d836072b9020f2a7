// Package celcost bounds a CEL expression's cost before it runs, for every
// CEL the platform evaluates (hooks in internal/exthost, content rules in
// internal/contentpolicy): a bounded parse, and a worst-case cost estimated
// for the size of the largest value an evaluation reads, memoised per size
// class. No runtime cost tracking: cel-go's tracker is quadratic in the
// length of a comprehension.
package celcost

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
)

// Parse parses expression in env, refusing one longer than maxLength code
// points before parsing and naming the nesting bound (the env's parser
// recursion limit, maxNesting) when the parser stops on it.
func Parse(env *cel.Env, expression string, maxLength, maxNesting int) (*cel.Ast, error) {
	if n := utf8.RuneCountInString(expression); n > maxLength {
		return nil, fmt.Errorf("expression is %d characters, more than the limit of %d", n, maxLength)
	}
	ast, iss := env.Parse(expression)
	if err := iss.Err(); err != nil {
		if strings.Contains(err.Error(), "recursion") {
			return nil, fmt.Errorf("expression nests deeper than %d levels (calls, fields, literals, operators); split it or flatten it: %w", maxNesting, err)
		}
		return nil, err
	}
	return ast, nil
}

// Estimator sizes every variable-dependent value at Max.
type Estimator struct{ Max uint64 }

// EstimateSize implements checker.CostEstimator.
func (e Estimator) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: e.Max}
}

// EstimateCallCost implements checker.CostEstimator: cel-go's own costs.
func (Estimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Estimate is the worst-case cost of ast in env when no value it reads is
// larger than size; a failed estimate counts as over every limit.
func Estimate(env *cel.Env, ast *cel.Ast, size uint64) uint64 {
	return EstimateWith(env, ast, Estimator{size})
}

// EstimateWith is the worst-case cost of ast in env with the value sizes
// est gives; a failed estimate counts as over every limit.
func EstimateWith(env *cel.Env, ast *cel.Ast, est checker.CostEstimator) uint64 {
	cost, err := env.EstimateCost(ast, est)
	if err != nil {
		return math.MaxUint64
	}
	return cost.Max
}

// Classes is the number of size classes (SizeClass) of sizes below 2^22.
const Classes = 44

// SizeClass maps size to a class and the class's largest size. Classes are
// half powers of two ([2^k, 1.5·2^k) and [1.5·2^k, 2^(k+1))), so a class
// over-states a size by less than 1.5×: an evaluation is refused only when
// values at most 1.5× its own would exceed the limit.
func SizeClass(size uint64) (class int, upper uint64) {
	if size < 4 {
		return int(size), size
	}
	n := bits.Len64(size) // size is in [2^(n-1), 2^n)
	if mid := uint64(3) << (n - 2); size < mid {
		return 2 * n, mid - 1
	}
	return 2*n + 1, 1<<n - 1
}

// Bounds memoises one expression's worst-case cost per size class. The
// zero value is ready; it is safe for concurrent use.
type Bounds struct {
	// b holds each class's bound plus one (0: not estimated yet).
	b [Classes]atomic.Uint64
}

// Bound is the worst-case cost of ast over values of at most size
// elements (strings in bytes, lists and maps in entries): MaxUint64 for a
// size past the classes or an estimate that failed.
func (m *Bounds) Bound(env *cel.Env, ast *cel.Ast, size uint64) uint64 {
	class, upper := SizeClass(size)
	if class >= Classes {
		return math.MaxUint64
	}
	if b := m.b[class].Load(); b != 0 {
		return b - 1
	}
	b := Estimate(env, ast, upper)
	if b != math.MaxUint64 {
		m.b[class].Store(b + 1)
	}
	return b
}
