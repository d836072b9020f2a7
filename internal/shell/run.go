package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// running is what a command runs besides itself.
type running struct {
	// argv is the command a wrapper runs (sudo rm -rf x runs rm -rf x).
	argv []string
	// lines are command lines it runs (bash -c 'rm -rf x', eval, su -c).
	lines []string
	// stdin: it is a shell reading its script from standard input.
	stdin bool
	// execs are the commands find runs (-exec rm -rf {} ;).
	execs [][]string
}

// wrapper describes a program that runs the command after its options:
// which options take a value, how many operands come before the command, and
// whether NAME=value words may precede it (env, sudo).
type wrapper struct {
	short       string   // short options taking a value
	long        []string // long options taking a value when not given with =
	operands    int
	assignments bool
}

var wrappers = map[string]wrapper{
	"env":     {short: "uCS", long: []string{"unset", "chdir", "split-string"}, assignments: true},
	"sudo":    {short: "CDghpRrTtUu", long: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "command-timeout", "type", "other-user", "user"}, assignments: true},
	"doas":    {short: "uC"},
	"nice":    {short: "n", long: []string{"adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"timeout": {short: "sk", long: []string{"signal", "kill-after"}, operands: 1},
	"time":    {short: "fo", long: []string{"format", "output"}},
	"stdbuf":  {short: "ioe", long: []string{"input", "output", "error"}},
	"ionice":  {short: "cnp", long: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"chroot":  {long: []string{"userspec", "groups"}, operands: 1},
	"command": {},
	"builtin": {},
	"exec":    {short: "a"},
	"xargs":   {short: "adEILnPs", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"busybox": {},
}

// shells run a command line given with -c, or read from standard input.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh"}

// runs says what argv runs besides itself.
func runs(argv []string) running {
	name := name(argv[0])
	switch {
	case slices.Contains(shells, name):
		return shell(argv)
	case name == "eval":
		if len(argv) > 1 {
			return running{lines: []string{strings.Join(argv[1:], " ")}}
		}
	case name == "su":
		return su(argv)
	case name == "find":
		return running{execs: findExecs(argv)}
	case name == "env":
		return env(argv)
	case name == "watch":
		// watch runs its words joined as a line of sh -c (unless -x).
		if cmd := (wrapper{short: "nd", long: []string{"interval"}}).command(argv); cmd != nil {
			return running{lines: []string{strings.Join(cmd, " ")}}
		}
	default:
		if w, ok := wrappers[name]; ok {
			return running{argv: w.command(argv)}
		}
	}
	return running{}
}

// command returns the command after the wrapper's options, assignments and
// leading operands; nil if there is none.
func (w wrapper) command(argv []string) []string {
	i := 1
	for i < len(argv) {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if w.assignments && isAssignment(a) {
			i++
			continue
		}
		if strings.HasPrefix(a, "--") {
			n, _, withValue := strings.Cut(a[2:], "=")
			i++
			if !withValue && slices.Contains(w.long, n) {
				i++
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		i++
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(w.short, a[j]) >= 0 {
				if j == len(a)-1 {
					i++ // the value is the next word
				}
				break // the rest of the word is the value
			}
		}
	}
	i += w.operands
	if i >= len(argv) {
		return nil
	}
	return argv[i:]
}

// env runs its command, or with -S/--split-string the command line its
// string splits into, followed by the remaining words.
func env(argv []string) running {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		var split string
		var ok bool
		switch {
		case a == "" || a == "--" || a == "-" || (a[0] != '-' && !isAssignment(a)):
			return running{argv: wrappers["env"].command(argv)}
		case strings.HasPrefix(a, "--split-string="):
			split, ok = a[len("--split-string="):], true
		case a == "--split-string" && i+1 < len(argv):
			i++
			split, ok = argv[i], true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if j := strings.IndexAny(a[1:], "uCS"); j >= 0 {
				opt, value := a[1+j], a[2+j:]
				if value == "" && i+1 < len(argv) {
					i++
					value = argv[i]
				}
				split, ok = value, opt == 'S'
			}
		}
		if ok {
			rest := []string{split}
			for _, r := range argv[i+1:] {
				q, err := syntax.Quote(r, syntax.LangBash)
				if err != nil {
					return running{}
				}
				rest = append(rest, q)
			}
			return running{lines: []string{strings.Join(rest, " ")}}
		}
	}
	return running{}
}

// shell: sh [options] -c 'line' [name [args]] runs line; without -c and
// without a script operand (or with -s) it reads its script from stdin.
func shell(argv []string) running {
	c, s := false, false
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		for _, o := range a[1:] {
			switch o {
			case 'c':
				c = true
			case 's':
				s = true
			case 'o', 'O':
				i++ // -o pipefail
			}
		}
	}
	switch {
	case c && i < len(argv):
		return running{lines: []string{argv[i]}}
	case c:
		return running{}
	case s || i >= len(argv):
		return running{stdin: true}
	}
	return running{} // a script file: not visible here
}

// su -c 'line' runs line in the user's shell.
func su(argv []string) running {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-c" || a == "--command":
			if i+1 < len(argv) {
				return running{lines: []string{argv[i+1]}}
			}
		case strings.HasPrefix(a, "--command="):
			return running{lines: []string{a[len("--command="):]}}
		case strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--"):
			return running{lines: []string{a[2:]}}
		case a == "-s" || a == "-g" || a == "-G" || a == "-w" || a == "--shell" || a == "--group" || a == "--supp-group" || a == "--whitelist-environment":
			i++
		}
	}
	return running{}
}

// findExecs returns the commands of find's -exec, -execdir, -ok and -okdir,
// each up to its ; or +.
func findExecs(argv []string) [][]string {
	var out [][]string
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(argv) && argv[j] != ";" && argv[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, argv[i+1:j])
			}
			i = j
		}
	}
	return out
}

// isAssignment reports whether a is NAME=value.
func isAssignment(a string) bool {
	n, _, ok := strings.Cut(a, "=")
	if !ok || n == "" || (n[0] >= '0' && n[0] <= '9') {
		return false
	}
	return strings.IndexFunc(n, func(r rune) bool {
		return !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0
}
