package exthost

import (
	"fmt"
	"math"

	"github.com/loadout-dev/loadout/internal/celcost"
)

// A CEL hook's cost is bounded before it runs: its worst case is estimated
// for the size of the largest value the call holds, per size class, and a
// call over the limit is refused.

// estimate is the worst-case cost of the expression when no value it reads
// (string, list or map) is larger than size; a failed estimate counts as
// over every limit, so such an expression is never evaluated unbounded.
func (c *celHandler) estimate(size uint64) uint64 {
	return celcost.Estimate(c.env, c.ast, size)
}

// costBound returns the worst-case cost of evaluating the expression on an
// input whose largest value has size elements, memoised per size class
// (celcost.SizeClass), so a call pays for an estimate only the first time
// its class is seen.
func (c *celHandler) costBound(size uint64) uint64 {
	return c.bounds.Bound(c.env, c.ast, size)
}

// MaxInputSize is the largest size (string length, list or map entries) of
// any value of a call or result: hostd refuses larger request bodies, so no
// value it evaluates can be larger.
const MaxInputSize = 1 << 20

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
