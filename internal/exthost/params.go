package exthost

import (
	"context"
	"fmt"
	"slices"
	"strings"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// missingParams is what a hook whose params ConfigMap was not found does
// (contract.HookParams.Missing): skip (Allow), or fail with a diagnostic
// (Deny, or an action this build does not know: closed).
func missingParams(b boundHook, p *contract.HookParams) (skip bool, d *Diagnostic) {
	switch p.Missing {
	case "":
		return false, nil
	case string(vocab.ParamsAllow):
		return true, nil
	}
	return false, &Diagnostic{ExtensionID: b.extension, Hook: b.hook.Name, Kind: DiagnosticError,
		Message: fmt.Sprintf("the hook's params ConfigMap %s was not found (parameterNotFoundAction: %s)", p.From, p.Missing)}
}

// WithParams is src with its hooks bound to params (nil: the extension has
// no paramRef), checked as the factory registers them (checkParams): a hook
// whose expression reads what params cannot give rejects the extension
// whole, with the hook's field (spec.hooks[i], in registration order).
func WithParams(src Source, params *contract.HookParams) Source {
	inner := src.Import
	src.Import = func(ctx context.Context, env Env) (Factory, error) {
		f, err := inner(ctx, env)
		if err != nil || f == nil {
			return f, err
		}
		return func(api API) error {
			pa := &paramsAPI{API: api, params: params}
			if err := f(pa); err != nil {
				return err
			}
			if len(pa.errs) > 0 {
				return Invalid(pa.errs)
			}
			return nil
		}, nil
	}
	return src
}

// paramsAPI binds each hook an extension registers to its params.
type paramsAPI struct {
	API
	params *contract.HookParams
	hooks  int
	errs   field.ErrorList
}

func (a *paramsAPI) On(h Hook) {
	p := field.NewPath("spec", "hooks").Index(a.hooks).Child("cel", "expression")
	a.hooks++
	a.errs = append(a.errs, checkParams(h.Handler, a.params, p, h.Name)...)
	h.Params = a.params
	a.API.On(h)
}

// checkParams checks a hook's params against what its CEL expression reads:
// an extension without a paramRef has no params to read, and a key the
// expression names literally (params.max, params['max']) must be in the
// ConfigMap, so a typo or a tenant's missing key is an error at reconcile
// naming both, not a failure at every call. Keys read dynamically, or under
// has(), are the expression's own business.
func checkParams(h Handler, params *contract.HookParams, p *field.Path, hook string) field.ErrorList {
	c, ok := h.(*celHandler)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	refs, whole := paramRefs(c.ast.NativeRep())
	switch {
	case params == nil && (whole || len(refs) > 0):
		errs = append(errs, field.Invalid(p, c.expression, fmt.Sprintf("hook %q reads params, but the extension has no paramRef", hook)))
	case params == nil || params.Missing != "":
		// No ConfigMap to check against: the hook fails or is skipped as
		// its parameterNotFoundAction says.
	default:
		for _, k := range refs {
			if _, ok := params.Values[k]; !ok {
				errs = append(errs, field.Invalid(p, c.expression, fmt.Sprintf("hook %q reads params.%s, but ConfigMap %s has no key %q (it has: %s)",
					hook, k, params.From, k, keyList(params.Values))))
			}
		}
	}
	return errs
}

// paramRefs lists the keys an expression reads from params by name, and
// whether it uses params any other way (whole, or by a computed key).
func paramRefs(a *celast.AST) (keys []string, other bool) {
	isParams := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == "params" }
	guarded := map[int64]bool{}
	for _, e := range celast.MatchDescendants(celast.NavigateAST(a), celast.AllMatcher()) {
		switch e.Kind() {
		case celast.SelectKind:
			sel := e.AsSelect()
			if !isParams(sel.Operand()) {
				continue
			}
			guarded[sel.Operand().ID()] = true
			if !sel.IsTestOnly() && !slices.Contains(keys, sel.FieldName()) {
				keys = append(keys, sel.FieldName())
			}
		case celast.CallKind:
			call := e.AsCall()
			if call.FunctionName() != operators.Index || len(call.Args()) != 2 || !isParams(call.Args()[0]) {
				continue
			}
			guarded[call.Args()[0].ID()] = true
			if lit := call.Args()[1]; lit.Kind() == celast.LiteralKind {
				if k, ok := lit.AsLiteral().(types.String); ok {
					if !slices.Contains(keys, string(k)) {
						keys = append(keys, string(k))
					}
					continue
				}
			}
			other = true
		}
	}
	for _, e := range celast.MatchDescendants(celast.NavigateAST(a), celast.KindMatcher(celast.IdentKind)) {
		if isParams(e) && !guarded[e.ID()] {
			other = true
		}
	}
	return keys, other
}

func keyList(m map[string]string) string {
	if len(m) == 0 {
		return "no keys"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// cloneParams is a deep copy of p.
func cloneParams(p *contract.HookParams) *contract.HookParams {
	if p == nil {
		return nil
	}
	c := *p
	if p.Values != nil {
		c.Values = make(map[string]string, len(p.Values))
		for k, v := range p.Values {
			c.Values[k] = v
		}
	}
	return &c
}
