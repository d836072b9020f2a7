package exthost

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/google/cel-go/checker"
)

// A CEL hook's cost is bounded before it runs: its worst case is estimated
// for the size of the largest value the call holds, per size class, and a
// call over the limit is refused.

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
