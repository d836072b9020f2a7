package shell

import (
	"math"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// wordInfo is what the line shows of a word.
type wordInfo uint8

const (
	// wDynamic: the word's value is only known at run time (an expansion,
	// a substitution, a glob).
	wDynamic wordInfo = 1 << iota
	// wLeading: it may begin with "-" at run time (it begins with an
	// expansion or a glob: "$F", *, which a file named -rf matches), so it
	// may be any option.
	wLeading
)

// info is what the line shows of a word made of parts.
func info(parts []syntax.WordPart) wordInfo {
	var f wordInfo
	for i, p := range parts {
		dynamic, leading := false, false
		switch p := p.(type) {
		case *syntax.Lit:
			if j := globAt(p.Value); j >= 0 {
				dynamic, leading = true, j == 0
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for k, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					dynamic = true
					leading = leading || k == 0
				}
			}
		default:
			dynamic, leading = true, true
		}
		if dynamic {
			f |= wDynamic
			if i == 0 && leading {
				f |= wLeading
			}
		}
	}
	return f
}

// globAt is where an unescaped glob character is in an unquoted literal,
// or -1: *, ?, or [ with a ] after it.
func globAt(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return i
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return i
			}
		}
	}
	return -1
}

// words appends the fields of word to c: its text after quote removal,
// once per brace expansion (bash expands {a,b} before running anything:
// rm -{r,f} is rm -r -f). Each field counts against the argv budget as it is
// made, so an expansion cannot allocate past it.
func (w *walker) words(src string, word *syntax.Word, c cmd) cmd {
	field := func(s string, f wordInfo) bool {
		if w.argvLeft -= len(s) + 1; w.argvLeft < 0 {
			w.fail("its words are too long once braces are expanded")
			return false
		}
		c.argv = append(c.argv, s)
		c.info = append(c.info, f)
		return true
	}
	braced := *word // SplitBraces rewrites the word: keep the tree as parsed
	if !syntax.SplitBraces(&braced) {
		field(text(src, word.Parts), info(word.Parts))
		return c
	}
	// Expanding costs time in the number of brace expressions squared per
	// word made, and the words made multiply: refuse before expanding.
	if n := braceExps(braced.Parts); n > MaxBraces {
		w.fail("a word has more than %d brace expansions", MaxBraces)
		return c
	}
	if expansions(braced.Parts, w.argvLeft) > w.argvLeft {
		w.fail("its words are too many once braces are expanded")
		return c
	}
	for expanded, err := range expand.BracesSeq(nil, &braced) {
		if err != nil {
			w.fail("%v", err)
			break
		}
		if !field(text(src, expanded.Parts), info(expanded.Parts)) {
			break
		}
	}
	return c
}

// MaxBraces caps the brace expressions in one word, nested ones included.
const MaxBraces = 32

// braceExps counts the brace expressions in parts, nested ones included,
// stopping once past MaxBraces, so that deep nesting is never walked.
func braceExps(parts []syntax.WordPart) int {
	n := 0
	var count func([]syntax.WordPart)
	count = func(parts []syntax.WordPart) {
		for _, p := range parts {
			b, ok := p.(*syntax.BraceExp)
			if !ok || n > MaxBraces {
				continue
			}
			n++
			if !b.Sequence {
				for _, e := range b.Elems {
					count(e.Parts)
				}
			}
		}
	}
	count(parts)
	return n
}

// expansions is how many words parts expand to, or more than limit once it
// exceeds limit.
func expansions(parts []syntax.WordPart, limit int) int {
	total := 1
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		n := 0
		if b.Sequence {
			n = sequenceLength(b)
		} else {
			for _, e := range b.Elems {
				n += expansions(e.Parts, limit)
			}
		}
		if total > limit/max(n, 1) {
			return limit + 1
		}
		total *= max(n, 1)
	}
	return total
}

// sequenceLength is how many words {from..to[..step]} makes: an upper
// bound, taking a non-number end as a character.
func sequenceLength(b *syntax.BraceExp) int {
	end := func(e *syntax.Word) int64 {
		v := e.Lit()
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
		if v == "" {
			return 0
		}
		return int64(v[0])
	}
	from, to := end(b.Elems[0]), end(b.Elems[1])
	step := int64(1)
	if len(b.Elems) > 2 {
		if s, err := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); err == nil && s != 0 {
			step = max(s, -s)
		}
	}
	span := to - from
	if span < 0 {
		span = -span
	}
	if span/step >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(span/step) + 1
}

// text is a word's value as the program would see it when the word's
// expansions are known only at run time: quotes removed, escapes applied,
// and each expansion ($X, ${X:-a}, $(cmd), $((1+2)), <(cmd), globs' @(…))
// kept as written in src.
func text(src string, parts []syntax.WordPart) string {
	if len(parts) == 1 {
		if lit, ok := parts[0].(*syntax.Lit); ok && !strings.Contains(lit.Value, `\`) {
			return lit.Value // the common case: no copy
		}
	}
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			unescape(&b, p.Value, func(byte) bool { return true })
		case *syntax.SglQuoted:
			b.WriteString(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					unescape(&b, lit.Value, func(c byte) bool { return strings.IndexByte("\"\\$`", c) >= 0 })
				} else {
					b.WriteString(source(src, q))
				}
			}
		default:
			b.WriteString(source(src, p))
		}
	}
	return b.String()
}

// unescape writes s, dropping each backslash that escapes a character for
// which escapes reports true.
func unescape(b *strings.Builder, s string, escapes func(byte) bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && escapes(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
}

// singleQuoted is the value of '…' or of $'…' (ANSI-C escapes applied, cut
// at a NUL as bash does).
func singleQuoted(q *syntax.SglQuoted) string {
	if !q.Dollar {
		return q.Value
	}
	s, _, err := expand.Format(nil, q.Value, nil)
	if err != nil {
		return q.Value
	}
	s, _, _ = strings.Cut(s, "\x00")
	return s
}

// source is a node's text as written in src.
func source(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if !n.Pos().IsValid() || start > end || end > len(src) {
		return ""
	}
	return src[start:end]
}

// stdinLine is the command line a shell reading its script from standard
// input gets, when the line shows it: a here-document or here-string on the
// statement, or the words of an echo piped into it. A script with an
// expansion the outer shell makes first (<<EOF with $x, <<< "$x", echo $x)
// is not shown: ok is false.
func stdinLine(src string, stmt, from *syntax.Stmt) (string, bool) {
	for i := len(stmt.Redirs) - 1; i >= 0; i-- {
		r := stmt.Redirs[i]
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			return heredoc(src, r)
		case syntax.WordHdoc:
			return text(src, r.Word.Parts), info(r.Word.Parts)&wDynamic == 0
		case syntax.RdrIn, syntax.RdrInOut:
			return "", false // a file
		}
	}
	if from == nil {
		return "", false
	}
	call, ok := from.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || name(text(src, call.Args[0].Parts)) != "echo" || len(from.Redirs) > 0 {
		return "", false
	}
	args := call.Args[1:]
	for len(args) > 0 {
		if a := text(src, args[0].Parts); len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		if strings.ContainsAny(text(src, args[0].Parts), "e") {
			return "", false // echo -e: escapes the script would hold
		}
		args = args[1:]
	}
	words := make([]string, len(args))
	for i, a := range args {
		if info(a.Parts)&wDynamic != 0 {
			return "", false
		}
		words[i] = text(src, a.Parts)
	}
	return strings.Join(words, " "), true
}

// heredoc is a here-document's body as the shell reads it: as written when
// its delimiter is quoted, otherwise with \$, \` and \\ unescaped; a body
// with an expansion the shell makes first is not shown (ok is false).
func heredoc(src string, r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if lit, ok := p.(*syntax.Lit); !ok || strings.Contains(lit.Value, `\`) {
			quoted = true
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		switch {
		case ok && quoted:
			b.WriteString(lit.Value)
		case ok:
			unescape(&b, lit.Value, func(c byte) bool { return strings.IndexByte("\\$`", c) >= 0 })
		case quoted:
			b.WriteString(source(src, p))
		default:
			return "", false
		}
	}
	return b.String(), true
}
