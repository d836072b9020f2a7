package shell

import (
	"regexp"
	"slices"
	"strings"
)

// Interpreters (python, perl, node, awk, …): the code they are given on the
// line, or a script they read, which the line does not show.

// interpreters run a program of another language given with -c or -e, or
// read from standard input.
var interpreters = []string{"python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh", "Rscript", "osascript", "deno", "bun", "awk", "gawk", "mawk", "nawk"}

// awkRuns: an awk program that runs a command: print | "cmd",
// "cmd" | getline, |&, system().
var awkRuns = regexp.MustCompile(`(^|[^|])\|\s*["&(a-zA-Z_$]|"\s*\||\bsystem\s*\(|\bgetline\b`)

// awkCode is an awk program without its regular expression literals, so
// /a|b/ reads as no pipe; a slash after an operand is a division, kept.
func awkCode(p string) string {
	var b strings.Builder
	last := byte(0) // the last byte written that is not a space
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '/' && strings.IndexByte("~(,!&|{;\n\x00", last) >= 0 {
			j := i + 1
			for j < len(p) && p[j] != '/' && p[j] != '\n' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(p) && p[j] == '/' {
				i = j
				b.WriteString("//")
				last = '/'
				continue
			}
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' {
			last = c
		}
	}
	return b.String()
}

// isInterpreter: python3.12 is python too.
func isInterpreter(name string) bool {
	if slices.Contains(interpreters, name) {
		return true
	}
	for _, p := range []string{"python", "pypy", "perl", "ruby", "php", "lua"} {
		if rest, ok := strings.CutPrefix(name, p); ok && strings.Trim(rest, "0123456789.") == "" {
			return true
		}
	}
	return false
}

// interpreter: python -c CODE, perl -e CODE, node -e CODE…: the code is
// among its words (Mentions reads it); with no code and no script file it
// reads its program from standard input, visible only from a
// here-document, a here-string or an echo.
func interpreter(c cmd) running {
	argv := c.argv
	n := name(argv[0])
	awk := strings.HasSuffix(n, "awk")
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if c.info[i]&wDynamic != 0 {
			return running{opaque: "its program is only known at run time"}
		}
		switch {
		case a == "-" || a == "/dev/stdin" || a == "/dev/fd/0" || a == "/proc/self/fd/0":
			return running{stdin: true, code: true}
		case strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print=") || strings.HasPrefix(a, "--command="):
			return running{}
		case a == "--":
			if i+1 < len(argv) {
				return running{}
			}
			return running{stdin: true, code: true}
		case awk && (a == "-f" || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "-f")):
			return running{opaque: "it runs a program file, which the line does not show"}
		case awk:
			if len(a) < 2 || a[0] != '-' {
				if awkRuns.MatchString(awkCode(a)) {
					return running{opaque: "its program runs a command (| \"cmd\", system)"}
				}
				return running{} // the program text is this word
			}
			if a == "-v" || a == "-F" {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			// python -c, -m; perl -e, -E; node -e, -p, --eval; ruby -e
			for _, code := range []string{"-c", "-e", "-E", "-p", "--eval", "--print", "-r", "-m"} {
				if a == code || (len(code) == 2 && strings.HasPrefix(a, code) && !strings.HasPrefix(a, "--")) {
					if a == code && i+1 < len(argv) && c.info[i+1]&wDynamic != 0 {
						return running{opaque: "its program is only known at run time"}
					}
					return running{}
				}
			}
			if strings.ContainsAny(a[1:2], "WXIQ") && len(a) == 2 {
				i++ // python -W arg, -X opt
			}
		default:
			return running{} // a script file: the program is not code from this line
		}
	}
	return running{stdin: true, code: true}
}
