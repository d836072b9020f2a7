package shell

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// PowerShell. A line of Claude Code's PowerShell tool is never read as
// bash: a small tokenizer reads its statements (; newlines | && ||), their
// words (bare, '…', "…", here-strings, backtick escapes, comments) and the
// groups inside them ((…), $(…), @(…), {…}), whose statements are read in
// turn. What it does not follow is Opaque: a command name or script built
// at run time (& $x, iex $s), .NET method calls ([IO.Directory]::Delete,
// (Get-Item x).Delete()), dot-sourcing, aliases and functions defined
// through drives, modules, Add-Type, Start-Process, cmd.exe.

// psAliases maps PowerShell's built-in aliases (lower case) to their cmdlet.
var psAliases = map[string]string{
	"rm": "Remove-Item", "del": "Remove-Item", "erase": "Remove-Item", "rd": "Remove-Item", "ri": "Remove-Item", "rmdir": "Remove-Item",
	"gci": "Get-ChildItem", "ls": "Get-ChildItem", "dir": "Get-ChildItem", "%": "ForEach-Object", "foreach": "ForEach-Object",
	"?": "Where-Object", "where": "Where-Object", "iex": "Invoke-Expression", "icm": "Invoke-Command", "saps": "Start-Process",
	"start": "Start-Process", "sal": "Set-Alias", "nal": "New-Alias", "ii": "Invoke-Item", "ipmo": "Import-Module",
	"mi": "Move-Item", "mv": "Move-Item", "move": "Move-Item", "cpi": "Copy-Item", "cp": "Copy-Item", "copy": "Copy-Item",
	"ni": "New-Item", "si": "Set-Item", "clc": "Clear-Content", "cli": "Clear-Item", "sajb": "Start-Job", "echo": "Write-Output",
	"cat": "Get-Content", "gc": "Get-Content", "type": "Get-Content", "sc": "Set-Content", "ac": "Add-Content",
	"cd": "Set-Location", "sl": "Set-Location", "chdir": "Set-Location", "pwd": "Get-Location", "gl": "Get-Location",
	"ipal": "Import-Alias", "set": "Set-Variable", "sv": "Set-Variable", "rni": "Rename-Item", "ren": "Rename-Item",
	"iwmi": "Invoke-WmiMethod", "icim": "Invoke-CimMethod",
}

// psCmdlets are the cmdlets whose names are canonicalised (any case in,
// this case out); other Verb-Noun names are kept as written.
var psCmdlets = func() map[string]string {
	m := map[string]string{}
	for _, c := range psAliases {
		m[strings.ToLower(c)] = c
	}
	for _, c := range []string{"Invoke-Expression", "Start-Job", "Start-ThreadJob", "Register-ObjectEvent", "Register-EngineEvent",
		"Add-Type", "New-Object", "Get-Item", "Remove-ItemProperty", "Write-Host", "Get-Process", "Stop-Process", "Select-String",
		"Get-Command", "Test-Path", "Resolve-Path", "Join-Path", "Split-Path", "Out-File", "Out-Null", "Measure-Object",
		"Sort-Object", "Select-Object", "Format-List", "Format-Table", "Tee-Object", "Get-Date", "Start-Sleep"} {
		m[strings.ToLower(c)] = c
	}
	return m
}()

// psKeywords start statements that are not commands; their groups are read.
var psKeywords = []string{"if", "elseif", "else", "for", "while", "do", "until", "switch", "try", "catch", "finally",
	"function", "filter", "workflow", "param", "begin", "process", "end", "break", "continue", "trap", "data", "class",
	"enum", "using", "dynamicparam", "configuration", "in"}

type psWord struct {
	text  string
	info  wordInfo
	block bool   // a script block {…}
	op    string // a statement operator: ; | && || & or a newline
	group bool   // a (…), $(…) or @(…) group: its value is computed
	// method: it calls a .NET method or static member ($x.Delete(),
	// [IO.Directory]::Delete(…), (gi x).Delete()).
	method bool
	// quoted: it begins with a quote (a string, not a command name).
	quoted bool
	// glob: it has a wildcard (a cmdlet gets it as written; pwsh on Unix
	// expands it for a native program).
	glob bool
}

// psMethod finds a member call outside quotes.
var psMethod = regexp.MustCompile(`::|[\w)\]]\.[\w'"$(]+\(|[\w)\]]\.(?:Invoke|Delete|Remove|Create)`)

// pwshLine reads one PowerShell line; its groups are returned to be read in
// turn.
func (w *walker) pwshLine(n nested) ([]nested, error) {
	if err := w.enter(n, "script blocks, subexpressions, -Command"); err != nil {
		return nil, err
	}
	w.pending = nil
	// Statements are judged as the tokenizer finds them, and only the
	// current one is held: a line of thousands of statements stops at the
	// walker's command limit instead of being tokenized whole first.
	var stmt []psWord
	prev := ""
	end := func(op string) error {
		via := prev
		prev = ""
		if len(stmt) > 0 {
			name := w.psStatement(n, stmt, via)
			if op == "|" {
				prev = name
			}
		}
		stmt = stmt[:0]
		return w.err
	}
	groups, err := psTokens(n.line, func(word psWord) error {
		if word.op == "" {
			if len(stmt) == cap(stmt) {
				// Doubling: append grows a large slice by a quarter, which
				// reallocates a statement of thousands of words five times
				// over.
				stmt = slices.Grow(stmt, max(len(stmt), 8))
			}
			stmt = append(stmt, word)
			return nil
		}
		return end(word.op)
	})
	if err == nil {
		err = end("")
	}
	if w.err != nil {
		return nil, w.err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	// A group's line is read after the statements of its own line, as
	// before the tokenizer streamed (the order the commands come out in).
	nestedGroups := make([]nested, 0, len(groups)+len(w.pending))
	for _, g := range groups {
		nestedGroups = append(nestedGroups, nested{line: g, depth: n.depth + 1, dialect: PowerShell})
	}
	w.pending = append(nestedGroups, w.pending...)
	return w.pending, w.err
}

// psStatement records a statement's command; it returns the command's name.
func (w *walker) psStatement(n nested, stmt []psWord, via string) string {
	if slices.ContainsFunc(stmt, func(s psWord) bool { return s.method }) {
		w.psAdd(stmt, "", "it calls a .NET method, which the guard does not read", via)
		return ""
	}
	first := stmt[0]
	// $x = <pipeline>, key = <pipeline> in @{…}, return <pipeline>
	if len(stmt) > 2 && (strings.HasPrefix(first.text, "$") || isName(first.text)) && strings.HasSuffix(stmt[1].text, "=") && stmt[1].info == 0 && !stmt[1].quoted {
		return w.psStatement(n, stmt[2:], via)
	}
	if k, _, ok := strings.Cut(first.text, "="); ok && isName(k) && !first.quoted {
		return "" // key=value in @{…}: an expression
	}
	if first.quoted {
		return "" // "text": an expression
	}
	if k := strings.ToLower(first.text); first.info == 0 && !first.block && (k == "return" || k == "throw" || k == "exit") && len(stmt) > 1 {
		return w.psStatement(n, stmt[1:], via)
	}
	if first.info == 0 && !first.block && !first.group && slices.Contains(psKeywords, strings.ToLower(first.text)) {
		return ""
	}
	if first.block || first.group {
		return "" // an expression: its statements are read on their own
	}
	if first.text == "&" || first.text == "." {
		if len(stmt) == 1 {
			return ""
		}
		target := stmt[1]
		switch {
		case target.block:
			return ""
		case first.text == ".":
			w.psAdd(stmt, "", "it dot-sources a script, which the line does not show", via)
			return ""
		case target.info&wDynamic != 0 || target.group || target.method:
			w.psAdd(stmt[1:], "", "its name is only known at run time", via)
			return ""
		}
		stmt[1].quoted = false // & "C:\Program Files\x.exe": a name
		stmt = stmt[1:]
		first = stmt[0]
	}
	if first.info&wDynamic != 0 {
		if strings.HasPrefix(first.text, "$") || strings.HasPrefix(first.text, "\"") || first.info&wLeading != 0 {
			return "" // an expression statement ($x, "text"): runs nothing but its groups
		}
	}
	raw := first.text
	if i := strings.LastIndexByte(raw, '\\'); i >= 0 && strings.Contains(raw[:i], ".") && !strings.ContainsAny(raw[:i], ":/") {
		raw = raw[i+1:] // Microsoft.PowerShell.Management\Remove-Item
	}
	lower := strings.ToLower(raw)
	canon := ""
	if c, ok := psAliases[lower]; ok {
		canon = c
	} else if c, ok := psCmdlets[lower]; ok {
		canon = c
	} else if strings.Contains(raw, "-") && !strings.ContainsAny(raw, `/\.`) && raw[0] != '-' {
		canon = raw // some other cmdlet or function
	}
	if canon == "" {
		// A native program: read as it would be from bash (sudo, find -exec,
		// bash -c…); lower stays for the name of pwsh.exe etc.
		c := psCmd(stmt, true)
		if strings.EqualFold(name(c.argv[0]), "cmd") || strings.EqualFold(name(c.argv[0]), "cmd.exe") {
			w.psAdd(stmt, "", "cmd.exe runs a line in another language, which the guard does not read", via)
			return "cmd"
		}
		w.dialect = Bash
		w.run(n, c, nil, nil, 0, "", false)
		w.dialect = PowerShell
		return name(c.argv[0])
	}
	reason := ""
	args := stmt[1:]
	lit := func() bool {
		for _, a := range args {
			if a.info&wDynamic != 0 || a.group {
				return false
			}
		}
		return true
	}
	hasBlock := slices.ContainsFunc(args, func(a psWord) bool { return a.block })
	switch canon {
	case "Invoke-Expression":
		if len(args) == 1 && lit() && !args[0].block {
			w.pending = append(w.pending, nested{line: args[0].text, depth: n.depth + 1, dialect: PowerShell})
		} else {
			reason = "Invoke-Expression runs a string only known at run time"
		}
	case "Invoke-Command", "Start-Job", "Start-ThreadJob":
		if !hasBlock || slices.ContainsFunc(args, func(a psWord) bool { return strings.HasPrefix(strings.ToLower(a.text), "-f") }) {
			reason = canon + " runs a script the line does not show"
		}
	case "Start-Process", "Invoke-Item", "Import-Module", "Add-Type", "Set-Alias", "New-Alias", "Import-Alias", "Invoke-WmiMethod", "Invoke-CimMethod", "New-Object":
		reason = canon + " runs or defines code the guard does not read"
	case "ForEach-Object":
		if len(args) > 0 && !hasBlock {
			reason = "ForEach-Object calls a member on each input (% Delete)"
		}
	}
	for _, a := range args {
		l := strings.ToLower(a.text)
		if strings.HasPrefix(l, "alias:") || strings.HasPrefix(l, "function:") || strings.Contains(l, "executioncontext") {
			reason = "it defines a function or alias, which changes what a name runs"
		}
	}
	w.psAdd(stmt, canon, reason, via)
	if lower == "rm" {
		// On Linux and macOS, pwsh's rm is the native rm.
		w.dialect = Bash
		w.run(n, psCmd(stmt, true), nil, nil, 0, "", false)
		w.dialect = PowerShell
	}
	return canon
}

// psCmd is a statement's words as a cmd; for a native program, pwsh on
// Unix expands wildcards, so a leading one may make any option.
func psCmd(stmt []psWord, native bool) cmd {
	c := cmd{argv: make([]string, 0, len(stmt)), info: make([]wordInfo, 0, len(stmt))}
	for _, s := range stmt {
		f := s.info
		if s.group {
			f |= wDynamic | wLeading
		}
		if s.glob && native && (strings.HasPrefix(s.text, "*") || strings.HasPrefix(s.text, "?") || strings.HasPrefix(s.text, "[")) {
			f |= wDynamic | wLeading
		}
		c.argv = append(c.argv, s.text)
		c.info = append(c.info, f)
	}
	return c
}

// psAdd records a PowerShell command.
func (w *walker) psAdd(stmt []psWord, canon, reason, via string) {
	c := psCmd(stmt, false)
	for i, s := range stmt[1:] {
		if strings.HasPrefix(s.text, "@") && !s.group && s.info&wDynamic != 0 {
			c.info[i+1] |= wLeading // @splat: any parameters
		}
	}
	w.dialect = PowerShell
	w.add(c, running{name: canon, opaque: reason}, via)
}

// psTokens splits a PowerShell line into words and statement operators,
// handing each to emit as it reads it (an error from emit stops it), and
// returns the text inside its groups, to be read as lines of their own.
func psTokens(s string, emit func(psWord) error) ([]string, error) {
	var groups []string
	// Whether anything was emitted yet, and whether the last was an
	// operator: & after an operator (or first) is the call operator.
	lastOp, seen := false, false
	send := func(word psWord) error {
		lastOp, seen = word.op != "", true
		return emit(word)
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '`' && i+1 < len(s) && (s[i+1] == '\n' || s[i+1] == '\r'):
			i += 2 // a line continuation
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '<' && strings.HasPrefix(s[i:], "<#"):
			j := strings.Index(s[i+2:], "#>")
			if j < 0 {
				return nil, fmt.Errorf("an unclosed <# comment")
			}
			i += j + 4
		case c == '\n' || c == ';':
			if err := send(psWord{op: ";"}); err != nil {
				return nil, err
			}
			i++
		case c == '|' || c == '&':
			op := string(c)
			if i+1 < len(s) && s[i+1] == c {
				op += string(c)
			}
			if op == "&" && (!seen || lastOp) {
				if err := send(psWord{text: "&"}); err != nil { // the call operator
					return nil, err
				}
				i++
				continue
			}
			sep := ";"
			if op == "|" {
				sep = "|"
			}
			if err := send(psWord{op: sep}); err != nil {
				return nil, err
			}
			i += len(op)
		case c == ')' || c == '}':
			return nil, fmt.Errorf("an unmatched %q", c)
		default:
			if op, n := psRedirect(s[i:]); n > 0 {
				i += n
				if op {
					continue
				}
				// the redirection's target word
				_, j, err := psWordAt(s, skipSpace(s, i))
				if err != nil {
					return nil, err
				}
				i = j
				continue
			}
			word, j, err := psWordAt(s, i)
			if err != nil {
				return nil, err
			}
			if err := send(word.psWord); err != nil {
				return nil, err
			}
			groups = append(groups, word.groups...)
			i = j
		}
	}
	return groups, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// psRedirect: the length of a redirection operator at s (>, >>, 2>, 2>&1,
// *>, 3>>); op is set when it takes no target (2>&1).
func psRedirect(s string) (op bool, n int) {
	j := 0
	if j < len(s) && (s[j] == '*' || (s[j] >= '1' && s[j] <= '6')) {
		j++
	}
	if j >= len(s) || s[j] != '>' {
		return false, 0
	}
	j++
	if j < len(s) && s[j] == '>' {
		j++
	}
	if j+1 < len(s) && s[j] == '&' && s[j+1] >= '1' && s[j+1] <= '6' {
		return true, j + 2
	}
	return false, j
}

type psParsed struct {
	psWord
	groups []string
}

// psWordAt reads the word at s[i:]: up to a space or an operator outside
// quotes and groups.
func psWordAt(s string, i int) (psParsed, int, error) {
	var w psParsed
	var b strings.Builder
	start := i
	for i < len(s) {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '|' || c == ')' || c == '}' || (c == '&' && i > start) {
			break
		}
		if (c == '#' && i == start) || strings.HasPrefix(s[i:], "<#") {
			break // a comment, even inside a word
		}
		if d := psDash(s[i:]); d > 0 {
			b.WriteByte('-') // PowerShell reads –, — and ― as -
			i += d
			continue
		}
		switch {
		case c == '`':
			if i+1 < len(s) {
				b.WriteByte(s[i+1])
			}
			i += 2
		case c == '\'' || (c == '@' && strings.HasPrefix(s[i:], "@'\n")) || (c == '@' && strings.HasPrefix(s[i:], "@'\r\n")):
			if c == '@' {
				k := i + strings.IndexByte(s[i:], '\n') + 1
				if strings.HasPrefix(s[k:], "'@") {
					i = k + 2 // an empty here-string
					continue
				}
				j := strings.Index(s[k:], "\n'@")
				if j < 0 {
					return w, 0, fmt.Errorf("an unclosed here-string")
				}
				b.WriteString(s[k : k+j])
				i = k + j + 3
				continue
			}
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], '\'')
				if k < 0 {
					return w, 0, fmt.Errorf("an unclosed quote")
				}
				b.WriteString(s[j : j+k])
				j += k + 1
				if j < len(s) && s[j] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			i = j
		case c == '"' || (c == '@' && (strings.HasPrefix(s[i:], "@\"\n") || strings.HasPrefix(s[i:], "@\"\r\n"))):
			here := c == '@'
			j := i + 1
			if here {
				j = i + strings.IndexByte(s[i:], '\n') + 1
			}
			bodyStart := j
			for {
				if j >= len(s) {
					return w, 0, fmt.Errorf("an unclosed quote")
				}
				if here && j == bodyStart && strings.HasPrefix(s[j:], "\"@") {
					j += 2 // an empty here-string
					break
				}
				d := s[j]
				if here && d == '\n' && strings.HasPrefix(s[j:], "\n\"@") {
					j += 3
					break
				}
				if !here && d == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					j++
					break
				}
				if d == '`' && j+1 < len(s) {
					b.WriteByte(s[j+1])
					j += 2
					continue
				}
				if d == '$' && j+1 < len(s) && (s[j+1] == '(' || s[j+1] == '{' || identByte(s[j+1]) || s[j+1] == '_' || s[j+1] == ':') {
					w.info |= wDynamic
					if j == i+1 && b.Len() == 0 {
						w.info |= wLeading
					}
					if s[j+1] == '(' {
						end, err := psClose(s, j+1)
						if err != nil {
							return w, 0, err
						}
						w.groups = append(w.groups, s[j+2:end])
						b.WriteString(s[j : end+1])
						j = end + 1
						continue
					}
				}
				b.WriteByte(d)
				j++
			}
			i = j
		case c == '(' || c == '{' || ((c == '$' || c == '@') && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{')):
			open := i
			if c == '$' || c == '@' {
				open++
			}
			end, err := psClose(s, open)
			if err != nil {
				return w, 0, err
			}
			inner := s[open+1 : end]
			if s[open] == '{' && c == '$' {
				// ${name}: a variable
				w.info |= wDynamic
				if i == start {
					w.info |= wLeading
				}
			} else {
				w.groups = append(w.groups, inner)
				if s[open] == '{' && i == start && c == '{' {
					w.block = true
				} else {
					w.group = true
					w.info |= wDynamic
					if i == start {
						w.info |= wLeading
					}
				}
			}
			b.WriteString(s[i : end+1])
			i = end + 1
		case c == '$' || (c == '@' && i == start && i+1 < len(s) && identByte(s[i+1])):
			if i+1 < len(s) && (identByte(s[i+1]) || s[i+1] == '_' || s[i+1] == ':' || s[i+1] == '?' || s[i+1] == '$' || s[i+1] == '^') {
				w.info |= wDynamic
				if i == start {
					w.info |= wLeading
				}
			}
			b.WriteByte(c)
			i++
		case c == '[' && i == start:
			// a type literal: [IO.Directory]::Delete(…)
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return w, 0, fmt.Errorf("an unclosed [")
			}
			b.WriteString(s[i : i+end+1])
			w.info |= wDynamic | wLeading
			i += end + 1
		default:
			if c == '*' || c == '?' {
				w.glob = true
			}
			b.WriteByte(c)
			i++
		}
	}
	i = min(i, len(s))
	if i == start {
		if i >= len(s) {
			return w, i, fmt.Errorf("a redirection with no target")
		}
		return w, i + 1, fmt.Errorf("unexpected %q", s[i])
	}
	w.text = b.String()
	w.quoted = s[start] == '\'' || s[start] == '"' || strings.HasPrefix(s[start:], "@'") || strings.HasPrefix(s[start:], "@\"")
	w.method = psMethod.MatchString(unquoted(s[start:i]))
	return w, i, nil
}

// psClose is the index of the bracket closing the one at s[open], across
// quotes and nested brackets.
func psClose(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '`':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return 0, fmt.Errorf("an unclosed quote")
			}
			i += j + 1
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '`' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return 0, fmt.Errorf("an unclosed quote")
			}
			i = j
		case '#':
			if i > 0 && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n' || s[i-1] == '(' || s[i-1] == '{' || s[i-1] == ';') {
				for i < len(s) && s[i] != '\n' {
					i++
				}
			}
		case '(', '{':
			depth++
		case ')', '}':
			depth--
			if depth == 0 {
				if (s[open] == '(') != (s[i] == ')') {
					return 0, fmt.Errorf("mismatched brackets")
				}
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("an unclosed %q", s[open])
}

// unquoted is s with the text of its quotes replaced by q.
func unquoted(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return b.String()
			}
			b.WriteByte('q')
			i += j + 1
		case '`':
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// psDash is the length of an en dash, em dash or horizontal bar at s,
// which PowerShell reads as a hyphen; 0 if there is none.
func psDash(s string) int {
	for _, d := range []string{"\u2013", "\u2014", "\u2015"} {
		if strings.HasPrefix(s, d) {
			return len(d)
		}
	}
	return 0
}
