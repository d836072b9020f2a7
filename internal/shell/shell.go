package shell

import (
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds. A command line is untrusted input evaluated inside a policy hook,
// so every way it can make the parse expensive is capped, and going over a
// cap is an error (a guard that asks fails closed), never a partial answer.
const (
	// MaxInput is the longest command line, in bytes.
	MaxInput = 64 << 10
	// MaxParseFrames caps the parser's recursion, in stack frames. The
	// parser recurses once or more per nested subshell, group, substitution,
	// compound command or arithmetic parenthesis (6 to 33 frames a level),
	// and deep recursion is what costs: 16 KiB of "((((…" took 220 ms and a
	// 33 MB stack. 2,048 frames is over 300 nested subshells or 60 nested
	// arithmetic parentheses. It is checked as the parser reads, every
	// readChunk bytes (limitedReader).
	MaxParseFrames = 2048
	// MaxTreeDepth caps how deep the walk over the parsed line goes.
	// Pipelines and && chains parse without recursion but make deep trees.
	MaxTreeDepth = 1024
	// MaxDepth caps command lines inside command lines: a `bash -c` string,
	// eval's arguments, a here-document fed to a shell.
	MaxDepth = 8
	// MaxWrappers caps wrappers around one command (sudo env nice rm …).
	MaxWrappers = 8
	// MaxCommands caps the commands one line may run.
	MaxCommands = 1024

	// BigLine is the size from which a line is parsed only while fewer than
	// BigLines such lines are being parsed in the process. Parsing takes
	// about 200 bytes of memory per byte of a dense line (a 64 KiB pipeline
	// allocates 12 MB), so a few big lines at once, not one per concurrent
	// request, bound what a flood of them costs; lines under it (nearly all)
	// never wait.
	BigLine  = 8 << 10
	BigLines = 2
)

// bigLines holds a slot per big line being parsed.
var bigLines = make(chan struct{}, BigLines)

// Budget is the work, in bytes, Commands may do for a line of n bytes:
// ParseBudget bytes parsed (the line and the command lines inside it) and
// ArgvBudget bytes of argv produced (brace expansion and wrappers repeat
// words). Both grow linearly with the line, so the work and memory of a
// call are bounded by its input, and the CEL cost of shell.commands is
// declared from them.
func ParseBudget(n int) int { return 2*min(n, MaxInput) + 4096 }

// ArgvBudget: see ParseBudget.
func ArgvBudget(n int) int { return 8*min(n, MaxInput) + 8192 }

// ErrUnparsable wraps every reason Commands gives no answer: the line does
// not parse, or it breaks a bound.
var ErrUnparsable = errors.New("shell command line not understood")

// Command is one simple command the line runs.
type Command struct {
	// Name is the program: the last path element of argv[0] (/bin/rm is rm).
	// When argv[0] is only known at run time ($RM, $(which rm)), Name is
	// argv[0] as written. In PowerShell, a cmdlet's alias is resolved to the
	// cmdlet (ri is Remove-Item).
	Name string `cel:"name"`
	// Argv is the command's words after quote removal and brace expansion;
	// a word with an expansion keeps it as written ("$HOME/build").
	Argv []string `cel:"argv"`
	// Opaque is set when the line does not show what the command does: its
	// name is only known at run time, it runs a script or a command line
	// the line does not show (bash script.sh, source, eval "$x", curl … |
	// sh), it defines an alias, or it evaluates a value the line does not
	// show as an expression (arithmetic). Reason says which.
	Opaque bool   `cel:"opaque"`
	Reason string `cel:"reason"`
	// Via is the program that completes the command's argv at run time:
	// find (-exec), xargs or parallel, through any wrappers in between; in
	// PowerShell, the command whose output is piped into it. Empty when
	// the line shows every word.
	Via string `cel:"via"`
	// Subcommand is the command's first operand (git -C x clean -fdx:
	// clean; for git, after its global options): its first argument not
	// beginning with "-".
	Subcommand string `cel:"subcommand"`
	// Dialect is the language whose rules read the command's flags:
	// "powershell" for a PowerShell cmdlet, "bash" for a program.
	Dialect string `cel:"dialect"`

	flags flags
	// script is the program an interpreter reads from a here-document or
	// an echo piped into it (python3 <<EOF …): Mentions reads it too.
	script string
	// dynamic: an argument is only known at run time; it may be any word.
	dynamic bool
}

// Dialect is the language a command line is written in.
type Dialect string

const (
	// Bash: POSIX shells and bash.
	Bash Dialect = "bash"
	// PowerShell: Windows PowerShell and pwsh.
	PowerShell Dialect = "powershell"
)

// DialectOf is the language of a shell tool's command line, by the tool's
// name as the agent reports it: PowerShell for Claude Code's PowerShell tool
// (and any tool named powershell or pwsh, any case), Bash for every other.
func DialectOf(tool string) Dialect {
	switch strings.ToLower(tool) {
	case "powershell", "pwsh", "powershell.exe", "pwsh.exe":
		return PowerShell
	}
	return Bash
}

// Commands returns every simple command line runs, in order of appearance,
// each command line before the command lines inside it: the commands of
// lists, pipelines, subshells, groups, functions and command substitutions;
// the command a wrapper runs (env, sudo, doas, nice, nohup, setsid, timeout,
// time, stdbuf, ionice, chroot, command, builtin, exec, xargs, busybox,
// taskset, flock, script -c, chrt, runuser, … see wrappers) after the
// wrapper itself; find's -exec/-execdir/-ok/-okdir commands; and the
// commands of a command line a shell runs: sh, bash, dash, zsh, ksh, mksh
// and ash with -c, or reading a here-document, here-string or `echo …` piped
// to it; `su -c`; eval's, trap's and watch's arguments when they are
// literal. Assignments before a command (FOO=1 rm) are not words of it.
// A program the package does not know that has a known program among its
// arguments (docker exec c rm -rf x) is listed as running it too.
//
// What the line cannot show is marked Opaque rather than guessed: a
// command name or a script built at run time, a script file, input piped
// from anything but echo, source, aliases, arithmetic on values the line
// does not show. A line that does not parse, or breaks a bound, is an error
// wrapping ErrUnparsable.
func Commands(line string) ([]Command, error) { return CommandsIn(Bash, line) }

// CommandsIn is Commands for a line in the given dialect. A PowerShell line
// is read by a PowerShell tokenizer (pwsh.go), never as bash: what it cannot
// follow is Opaque.
func CommandsIn(d Dialect, line string) ([]Command, error) {
	if len(line) > MaxInput {
		return nil, fmt.Errorf("%w: it is %d bytes, over the limit of %d", ErrUnparsable, len(line), MaxInput)
	}
	w := &walker{parseLeft: ParseBudget(len(line)), argvLeft: ArgvBudget(len(line))}
	defer w.release()
	queue := []nested{{line: line, dialect: d}}
	if d != PowerShell {
		queue[0].dialect = Bash
	}
	for len(queue) > 0 {
		// Command lines inside a line are parsed after it, one at a time,
		// so at most one syntax tree is alive.
		n := queue[0]
		queue = queue[1:]
		var inner []nested
		var err error
		if n.dialect == PowerShell {
			inner, err = w.pwshLine(n)
		} else {
			inner, err = w.line(n)
		}
		if err != nil {
			return nil, err
		}
		queue = append(queue, inner...)
	}
	return w.out, nil
}

// nested is a command line to parse and how deep it is.
type nested struct {
	line    string
	depth   int
	dialect Dialect
	// guess: a word of a program the package does not know that looks like
	// a command line (tmux send-keys 'rm -rf x' Enter). It is read only if
	// it parses; it makes no error.
	guess bool
	// via: the program that completes the argv of the line's commands
	// (find -exec bash -c '…', parallel 'rm {}').
	via string
}

type walker struct {
	out                 []Command
	parseLeft, argvLeft int
	pending             []nested
	err                 error
	big                 bool // holds a bigLines slot
	dialect             Dialect
}

func (w *walker) release() {
	if w.big {
		<-bigLines
	}
}

func (w *walker) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: "+format, append([]any{ErrUnparsable}, args...)...)
	}
}

// enter charges a command line to the walk's budgets before it is parsed:
// its nesting depth (nesting names what nests in its dialect), the bytes
// left to parse, and the one slot for lines of BigLine or more.
func (w *walker) enter(n nested, nesting string) error {
	if n.depth > MaxDepth {
		return fmt.Errorf("%w: command lines nest more than %d deep (%s)", ErrUnparsable, MaxDepth, nesting)
	}
	if w.parseLeft -= len(n.line); w.parseLeft < 0 {
		return fmt.Errorf("%w: the command lines inside it are too long to parse", ErrUnparsable)
	}
	if len(n.line) >= BigLine && !w.big {
		bigLines <- struct{}{}
		w.big = true
	}
	return nil
}

// line parses one command line and collects its commands; it returns the
// command lines found inside it.
func (w *walker) line(n nested) ([]nested, error) {
	if err := w.enter(n, "bash -c, eval, su -c"); err != nil {
		return nil, err
	}
	r := &limitedReader{s: n.line}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(r, "")
	if r.tooDeep {
		return nil, fmt.Errorf("%w: it nests too deeply (subshells, groups, substitutions, compound commands)", ErrUnparsable)
	}
	if err != nil {
		if n.guess {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	w.pending = nil
	w.dialect = Bash
	var pipedFrom map[*syntax.Stmt]*syntax.Stmt
	depth := 0
	syntax.Walk(f, func(node syntax.Node) bool {
		if node == nil { // leaving a node whose children were walked
			depth--
			return true
		}
		if w.err != nil {
			return false
		}
		if depth == MaxTreeDepth {
			w.fail("it nests more than %d levels deep (pipelines, lists)", MaxTreeDepth)
			return false
		}
		depth++
		switch node := node.(type) {
		case *syntax.BinaryCmd:
			if node.Op == syntax.Pipe || node.Op == syntax.PipeAll {
				if pipedFrom == nil {
					pipedFrom = map[*syntax.Stmt]*syntax.Stmt{}
				}
				pipedFrom[node.Y] = node.X
			}
		case *syntax.Stmt:
			if call, ok := node.Cmd.(*syntax.CallExpr); ok {
				w.call(n, node, call, pipedFrom[node])
			}
		default:
			w.evaluates(n.line, node)
		}
		return true
	})
	return w.pending, w.err
}

// call records a simple command and what it runs.
func (w *walker) call(n nested, stmt *syntax.Stmt, call *syntax.CallExpr, from *syntax.Stmt) {
	var c cmd
	for _, word := range call.Args {
		c = w.words(n.line, word, c)
	}
	if len(c.argv) == 0 || w.err != nil {
		return // only assignments: FOO=1
	}
	w.run(n, c, stmt, from, 0, n.via, false)
}

// cmd is an argv and, for each word, what the line shows of it.
type cmd struct {
	argv []string
	info []wordInfo
}

func (c cmd) from(i int) cmd { return cmd{c.argv[i:], c.info[i:]} }

// literal reports whether every word from i on is known before run time.
func (c cmd) literal(i int) bool {
	for _, f := range c.info[min(i, len(c.info)):] {
		if f&wDynamic != 0 {
			return false
		}
	}
	return true
}

// run records argv and, in turn, what it runs: command lines to parse later,
// find's commands, and the command a wrapper runs. stmt and from are argv's
// statement and the one piped into it, nil for a command find runs;
// wrapped counts the wrappers and finds around argv; via is the program
// that completes argv at run time (find, xargs), if any; guessed: argv
// is only perhaps a command (a program the package does not know may run
// it), so what it would read on standard input counts only when the line
// feeds it some.
func (w *walker) run(n nested, c cmd, stmt, from *syntax.Stmt, wrapped int, via string, guessed bool) {
	for {
		r := runs(c)
		if r.via != "" {
			via = r.via
		}
		if r.escaper && feedsStdin(stmt, from) && r.opaque == "" {
			r.opaque = name(c.argv[0]) + " reads commands of its own from standard input, which may run a shell command"
		}
		if r.stdin {
			// A program reading a script from standard input: visible
			// only from a here-document, a here-string or an echo.
			l, ok := "", false
			if stmt != nil {
				l, ok = stdinLine(n.line, stmt, from)
			}
			switch {
			case !ok && r.opaque == "" && (!guessed || feedsStdin(stmt, from)):
				r.opaque = "it reads a script from standard input, which the line does not show"
			case ok && r.code:
				r.script = l
			case ok:
				r.lines = append(r.lines, l)
			}
		}
		if guessed && r.opaque == scriptFile {
			r.opaque = ""
		}
		w.add(c, r, via)
		if w.err != nil {
			return
		}
		for _, l := range r.lines {
			w.pending = append(w.pending, nested{line: l, depth: n.depth + 1, dialect: r.lineDialect(), via: via})
		}
		for _, l := range r.guesses {
			w.pending = append(w.pending, nested{line: l, depth: n.depth + 1, dialect: Bash, guess: true, via: via})
		}
		if (r.at > 0 || len(r.execs) > 0 || len(r.alsos) > 0) && wrapped == MaxWrappers {
			w.fail("more than %d wrappers around one command", MaxWrappers)
			return
		}
		wrapped++
		for _, sub := range r.execs {
			w.run(n, sub, nil, nil, wrapped, "find", guessed)
		}
		for _, sub := range r.alsos {
			w.run(n, sub, stmt, from, wrapped, via, true)
			if w.err != nil {
				return
			}
		}
		if r.at == 0 || r.at >= len(c.argv) || w.err != nil {
			return
		}
		c = c.from(r.at)
	}
}

// feedsStdin reports whether the line feeds stmt's standard input: a pipe
// into it, a here-document or here-string, or a redirection.
func feedsStdin(stmt, from *syntax.Stmt) bool {
	if stmt == nil {
		return false
	}
	return from != nil || slices.ContainsFunc(stmt.Redirs, func(rd *syntax.Redirect) bool {
		return (rd.N == nil || rd.N.Value == "0") && (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc || rd.Op == syntax.WordHdoc ||
			rd.Op == syntax.RdrIn || rd.Op == syntax.DplIn || rd.Op == syntax.RdrInOut)
	})
}

// add records one command; its argv counts against the argv budget.
func (w *walker) add(c cmd, r running, via string) {
	if w.err != nil {
		return
	}
	if len(w.out) == MaxCommands {
		w.fail("it runs more than %d commands", MaxCommands)
		return
	}
	size := len(c.argv) + len(r.script)
	for _, a := range c.argv {
		size += len(a)
	}
	if w.argvLeft -= size; w.argvLeft < 0 {
		w.fail("its commands' words are too long")
		return
	}
	d := w.dialect
	if d == "" {
		d = Bash
	}
	out := Command{Name: r.name, Argv: c.argv, Via: via, Dialect: string(d), flags: parseFlags(c.argv, c.info), script: r.script}
	if out.Name == "" {
		out.Name = name(c.argv[0])
	}
	if !c.literal(1) {
		out.dynamic = true
	}
	sub := 0
	if out.Name == "git" {
		sub = gitSubcommand(c.argv)
	} else {
		sub = slices.IndexFunc(c.argv[1:], func(a string) bool { return !strings.HasPrefix(a, "-") }) + 1
	}
	if sub > 0 {
		out.Subcommand = c.argv[sub]
		if c.info[sub]&wDynamic != 0 && out.Name == "git" && r.opaque == "" {
			r.opaque = "its subcommand is only known at run time"
		}
	}
	if c.info[0]&wDynamic != 0 && r.opaque == "" {
		r.opaque = "its name is only known at run time"
	}
	if r.opaque != "" {
		out.Opaque, out.Reason = true, r.opaque
	}
	w.out = append(w.out, out)
}

// opaque records something the line runs or evaluates that it does not
// show, as a command of its own: argv is the construct as written.
func (w *walker) opaque(argv []string, reason string) {
	if w.err != nil {
		return
	}
	c := cmd{argv: argv, info: make([]wordInfo, len(argv))}
	w.add(c, running{opaque: reason}, "")
}

// name is the program argv0 runs: its last path element (/ or \, so
// C:\Git\bin\git.exe is git too), without a Windows program suffix
// (.exe, .com); argv0 itself when it has an expansion.
func name(argv0 string) string {
	if argv0 == "" || strings.ContainsAny(argv0, "$`") {
		return argv0
	}
	b := argv0[strings.LastIndexAny(argv0, `/\`)+1:]
	if b == "" {
		return path.Base(argv0)
	}
	if e := strings.ToLower(path.Ext(b)); (e == ".exe" || e == ".com") && len(b) > len(e) {
		b = b[:len(b)-len(e)]
	}
	return b
}

// readChunk is how many bytes limitedReader hands the parser at a time:
// between two checks the parser can recurse at most this many bytes deeper
// (at most 33 frames a byte, for arithmetic parentheses), so its stack stays
// within about MaxParseFrames + 33·readChunk frames, under 2 MB.
const readChunk = 128

// limitedReader feeds the parser a line readChunk bytes at a time and, from
// the second read on, stops it with an error once its goroutine's stack is
// more than MaxParseFrames frames deep. The parser has no depth limit of its
// own; this bounds its recursion by what it really does, whatever the
// quoting, so no pre-scan has to guess which brackets count. The first read
// is not checked: the parser has consumed nothing yet, and a line of one
// chunk (most lines) then costs no stack walk at all.
type limitedReader struct {
	s       string
	off     int
	tooDeep bool
}

var errTooDeep = errors.New("too deep")

func (r *limitedReader) Read(b []byte) (int, error) {
	if r.off == len(r.s) {
		return 0, io.EOF // nothing more to parse: no deeper than the last chunk
	}
	if r.off > 0 {
		var pc [1]uintptr
		if runtime.Callers(MaxParseFrames, pc[:]) > 0 {
			r.tooDeep = true
			return 0, errTooDeep
		}
	}
	n := copy(b[:min(len(b), readChunk)], r.s[r.off:])
	r.off += n
	return n, nil
}
