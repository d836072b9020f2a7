package exthost

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// checkOutcomeType refuses, at compile time, an expression that cannot yield
// an outcome of event: its type must be bool or a map with string keys, and
// every map literal it can yield (directly or as a branch of ?:) may name only
// the event's keys, each with a value of the key's type. What the checker
// cannot see (a map built at run time, a dyn value) is checked at evaluation
// and fails the hook closed.
func checkOutcomeType(event vocab.HookEvent, ast *cel.Ast) error {
	t := ast.OutputType()
	switch {
	case t.IsExactType(types.BoolType), t.IsExactType(types.DynType):
	case t.Kind() == types.MapKind && len(t.Parameters()) == 2 &&
		(t.Parameters()[0].IsExactType(types.StringType) || t.Parameters()[0].IsExactType(types.DynType)):
	default:
		return fmt.Errorf("expression must evaluate to bool or to a map of outcomes (%s hooks: %s), not %s",
			event, joinKeys(event), t)
	}
	native := ast.NativeRep()
	return checkOutcomeExpr(event, native, native.Expr())
}

// checkOutcomeExpr checks the map literals e can yield.
func checkOutcomeExpr(event vocab.HookEvent, a *celast.AST, e celast.Expr) error {
	switch e.Kind() {
	case celast.CallKind:
		call := e.AsCall()
		if call.FunctionName() == operators.Conditional && len(call.Args()) == 3 {
			if err := checkOutcomeExpr(event, a, call.Args()[1]); err != nil {
				return err
			}
			return checkOutcomeExpr(event, a, call.Args()[2])
		}
	case celast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			me := entry.AsMapEntry()
			if me.Key().Kind() != celast.LiteralKind {
				continue
			}
			key, ok := me.Key().AsLiteral().(types.String)
			if !ok {
				return fmt.Errorf("outcome keys must be strings, not %s", me.Key().AsLiteral().Type().TypeName())
			}
			if !allowsKey(event, string(key)) {
				return &OutcomeKeyError{Event: event, Key: string(key)}
			}
			if got := a.GetType(me.Value().ID()); got != nil && !fitsKind(got, outcomeKinds[string(key)]) {
				return &OutcomeKeyError{Event: event, Key: string(key), Got: got.String()}
			}
		}
	}
	return nil
}

// fitsKind reports whether a checked CEL type can hold a value of kind; dyn
// can, and is checked at evaluation.
func fitsKind(t *types.Type, kind outcomeKind) bool {
	if t.IsExactType(types.DynType) {
		return true
	}
	switch kind {
	case kindBool:
		return t.IsExactType(types.BoolType)
	case kindString:
		return t.IsExactType(types.StringType)
	default:
		return t.Kind() == types.MapKind
	}
}

func joinKeys(event vocab.HookEvent) string {
	return strings.Join(eventSpecs[event].outcomes, ", ")
}

// verdictFromCEL reads a CEL value that is not a bool as an outcome map.
func verdictFromCEL(event vocab.HookEvent, out ref.Val, fallback string) (Verdict, error) {
	if _, ok := out.(traits.Mapper); !ok {
		return Verdict{}, fmt.Errorf("expression evaluated to %s, not a bool or a map of outcomes", out.Type().TypeName())
	}
	v, err := celToJSON(out)
	if err != nil {
		return Verdict{}, err
	}
	return verdictFromMap(event, v.(map[string]any), fallback)
}

// celToJSON converts a CEL value to its JSON form (maps with string keys,
// lists, strings, numbers, booleans, null): the form arguments take.
func celToJSON(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Bool:
		return bool(x), nil
	case types.String:
		return string(x), nil
	case types.Int:
		return float64(x), nil // JSON numbers, as hostd decodes arguments
	case types.Uint:
		return float64(x), nil
	case types.Double:
		return float64(x), nil
	case types.Null:
		return nil, nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is a %s, not a string", k, k.Type().TypeName())
			}
			val, err := celToJSON(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = val
		}
		return out, nil
	case traits.Lister:
		out := []any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			val, err := celToJSON(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	case *types.Err:
		return nil, x
	}
	return nil, errors.New("a value of type " + v.Type().TypeName() + " has no JSON form")
}
