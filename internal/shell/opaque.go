package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// evaluates records, as an opaque command of its own, a construct that
// evaluates a value the line does not show as code. Bash evaluates
// arithmetic recursively: in $((x)), ((x)), let x, a[x]=1, ${a[x]},
// ${s:x}, [[ x -eq 1 ]] and for ((…)), a variable whose value is
// 'a[$(rm -rf y)]' runs rm. So arithmetic is shown only when it holds
// numbers (and $?, $#, $$, $!). ${!x} expands the variable x names
// (evaluating a subscript in it), ${x@P} expands x like a prompt
// (substitutions and all), and assigning BASH_ENV, PS4, BASH_ALIASES and
// the like makes a shell run code it was not given in the line; declare -n
// and -i evaluate what is later assigned.
func (w *walker) evaluates(src string, node syntax.Node) {
	switch n := node.(type) {
	case *syntax.ArithmExp:
		w.arithm(src, "$((", n.X, n)
	case *syntax.ArithmCmd:
		w.arithm(src, "((", n.X, n)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			if w.arithm(src, "let", x, n) {
				break
			}
		}
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			if x != nil && w.arithm(src, "for ((", x, n) {
				break
			}
		}
	case *syntax.ParamExp:
		switch {
		case n.Excl && n.Names == 0 && n.Index == nil:
			w.opaque([]string{source(src, n)}, "it expands the variable another variable names (${!x}), which the line does not show")
		case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.ContainsAny(n.Exp.Word.Lit(), "P"):
			w.opaque([]string{source(src, n)}, "it expands a value as a prompt (${x@P}), running the substitutions in it")
		}
		if n.Index != nil {
			w.arithm(src, "[", n.Index, n)
		}
		if n.Slice != nil {
			for _, x := range []syntax.ArithmExpr{n.Slice.Offset, n.Slice.Length} {
				if x != nil && w.arithm(src, "${:", x, n) {
					break
				}
			}
		}
	case *syntax.Assign:
		if n.Name != nil && dangerousAssignment(n.Name.Value, assigned(src, n), n.Value != nil && info(n.Value.Parts)&wDynamic != 0) {
			w.opaque([]string{source(src, n)}, "it sets "+n.Name.Value+", which makes a shell run code the line does not show")
		}
		if n.Index != nil {
			w.arithm(src, "[", n.Index, n)
		}
		if n.Array != nil {
			for _, e := range n.Array.Elems {
				if e.Index != nil {
					w.arithm(src, "[", e.Index, e)
				}
			}
		}
	case *syntax.DeclClause:
		for _, a := range n.Args {
			if !a.Naked || a.Value == nil {
				continue
			}
			v := a.Value.Lit()
			switch {
			case info(a.Value.Parts)&wDynamic != 0:
				w.opaque([]string{source(src, n)}, n.Variant.Value+" takes words only known at run time")
			case strings.HasPrefix(v, "-") && strings.ContainsAny(v, "ni"):
				w.opaque([]string{source(src, n)}, n.Variant.Value+" "+v+" makes later assignments evaluate their values")
			}
		}
	case *syntax.TestClause:
		syntax.Walk(n.X, func(m syntax.Node) bool {
			if u, ok := m.(*syntax.UnaryTest); ok && u.Op == syntax.TsVarSet {
				if word, ok := u.X.(*syntax.Word); ok {
					v := text(src, word.Parts)
					j := strings.IndexByte(v, '[')
					if info(word.Parts)&wDynamic != 0 && (j < 0 || !literalSubscript(strings.TrimSuffix(v[j+1:], "]"))) {
						w.opaque([]string{source(src, n)}, "[[ -v ]] evaluates "+v+", which the line does not show")
						return false
					}
					if j > 0 && !literalSubscript(strings.TrimSuffix(v[j+1:], "]")) {
						w.opaque([]string{source(src, n)}, "[[ -v ]] evaluates the array subscript of "+v)
						return false
					}
				}
				return true
			}
			b, ok := m.(*syntax.BinaryTest)
			if !ok {
				return true
			}
			switch b.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, x := range []syntax.TestExpr{b.X, b.Y} {
					if word, ok := x.(*syntax.Word); ok && !numeric(word) {
						w.opaque([]string{source(src, n)}, "[[ … -eq … ]] evaluates "+source(src, word)+" as arithmetic, which the line does not show")
						return false
					}
				}
			}
			return true
		})
	}
}

// arithm records arithmetic x as opaque unless every operand is a number;
// it reports whether it did.
func (w *walker) arithm(src, kind string, x syntax.ArithmExpr, whole syntax.Node) bool {
	bad := ""
	syntax.Walk(x, func(m syntax.Node) bool {
		if bad != "" {
			return false
		}
		if word, ok := m.(*syntax.Word); ok {
			if !numeric(word) {
				bad = source(src, word)
			}
			return false
		}
		return true
	})
	if bad != "" {
		w.opaque([]string{kind, source(src, whole)}, "arithmetic evaluates "+bad+", whose value the line does not show, as an expression")
	}
	return bad != ""
}

// numeric: a number (decimal, 0x…, base#…), @ or *, or a special
// parameter whose value is always a number ($?, $#, $$, $!).
func numeric(word *syntax.Word) bool {
	if len(word.Parts) != 1 {
		return false
	}
	switch p := word.Parts[0].(type) {
	case *syntax.Lit:
		v := p.Value
		if v == "@" || v == "*" {
			return true
		}
		if b, n, ok := strings.Cut(v, "#"); ok {
			return b != "" && strings.Trim(b, "0123456789") == "" && n != "" && strings.Trim(strings.ToLower(n), "0123456789abcdefghijklmnopqrstuvwxyz@_") == ""
		}
		v = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(v), "0x"), "0")
		return strings.Trim(v, "0123456789abcdef") == "" && (p.Value != "" && p.Value[0] >= '0' && p.Value[0] <= '9')
	case *syntax.ParamExp:
		return p.Param != nil && p.Index == nil && p.Exp == nil && p.Slice == nil && p.Repl == nil && !p.Excl && !p.Length &&
			(p.Param.Value == "?" || p.Param.Value == "#" || p.Param.Value == "$" || p.Param.Value == "!")
	}
	return false
}

// assigned is the value an assignment gives, quotes removed.
func assigned(src string, a *syntax.Assign) string {
	if a.Value == nil {
		return ""
	}
	return text(src, a.Value.Parts)
}
