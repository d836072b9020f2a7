package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Programs that run another command after their own options and operands
// (sudo, env, nice, timeout, xargs, su, at, parallel, make's and npm's
// script runners): where that command starts in their argv, or the line
// they run.

// wrapper describes a program that runs the command after its options:
// which options take a value, how many operands come before the command, and
// whether NAME=value words may precede it (env, sudo).
type wrapper struct {
	short       string   // short options taking a value
	long        []string // long options taking a value when not given with =
	operands    int
	assignments bool
	// line: this option (with its value) gives a command line instead
	// (flock -c, script -c, runuser -c).
	line string
	// none: with this option the wrapper runs no command (taskset -p).
	none string
	// shell: given no command, it runs a shell, which reads its script
	// from standard input (unshare, chroot DIR, script without -c).
	shell bool
	// noArgv: its operands are files, never a command (script FILE).
	noArgv bool
}

var wrappers = map[string]wrapper{
	"env":              {short: "uCS", long: []string{"unset", "chdir", "split-string"}, assignments: true},
	"sudo":             {short: "CDghpRrTtUu", long: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "command-timeout", "type", "other-user", "user"}, assignments: true},
	"doas":             {short: "uC"},
	"nice":             {short: "n", long: []string{"adjustment"}},
	"nohup":            {},
	"setsid":           {},
	"timeout":          {short: "sk", long: []string{"signal", "kill-after"}, operands: 1},
	"time":             {short: "fo", long: []string{"format", "output"}},
	"stdbuf":           {short: "ioe", long: []string{"input", "output", "error"}},
	"ionice":           {short: "cnp", long: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"chroot":           {long: []string{"userspec", "groups"}, operands: 1, shell: true},
	"command":          {},
	"builtin":          {},
	"exec":             {short: "a"},
	"xargs":            {short: "adEILnPs", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"busybox":          {},
	"taskset":          {operands: 1, none: "p"},
	"flock":            {short: "wE", long: []string{"timeout", "wait", "conflict-exit-code"}, operands: 1, line: "c"},
	"script":           {short: "EIOTBm", long: []string{"echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}, line: "c", shell: true, noArgv: true},
	"chrt":             {short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, operands: 1, none: "p"},
	"runuser":          {short: "ugGsw", long: []string{"user", "group", "supp-group", "shell", "whitelist-environment"}, line: "c", shell: true},
	"setpriv":          {},
	"unshare":          {short: "SGRw", long: []string{"setuid", "setgid", "root", "wd", "propagation"}, shell: true},
	"nsenter":          {short: "tSG", long: []string{"target", "setuid", "setgid"}, shell: true},
	"prlimit":          {short: "p", long: []string{"pid"}},
	"strace":           {short: "eoOpPsuIbEXaS"},
	"ltrace":           {short: "eoOpPsuIbEXaSlnA"},
	"sg":               {operands: 1, line: "c", shell: true},
	"pkexec":           {long: []string{"user"}},
	"fakeroot":         {short: "is", long: []string{"lib", "faked"}, shell: true},
	"eatmydata":        {},
	"xvfb-run":         {short: "nsfpe", long: []string{"server-num", "server-args", "auth-file", "xauth-protocol", "error-file"}},
	"caffeinate":       {short: "tw"},
	"nocache":          {},
	"chronic":          {},
	"numactl":          {short: "CNmMpPi"},
	"cgexec":           {short: "g"},
	"firejail":         {shell: true},
	"proot":            {short: "rbwq", shell: true},
	"torsocks":         {},
	"proxychains":      {short: "f"},
	"proxychains4":     {short: "f"},
	"systemd-run":      {short: "pMEu", long: []string{"unit", "property", "description", "slice", "setenv", "uid", "gid", "nice", "working-directory", "machine", "host"}},
	"dbus-run-session": {},
	"catchsegv":        {},
	"setarch":          {operands: 1},
	"linux32":          {},
	"linux64":          {},
	"parallel":         {short: "jSIEnNLPsXd", long: []string{"jobs", "sshlogin", "delimiter", "max-args", "max-lines", "tmpdir"}},
}

// run: the command a wrapper runs, or the line its line option gives.
func (w wrapper) run(c cmd) running {
	argv := c.argv
	if w.line != "" || w.none != "" {
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			if a == "--" {
				break
			}
			if len(a) < 2 || a[0] != '-' {
				if w.operands == 0 && !w.noArgv {
					break
				}
				continue // flock FILE -c 'line', script FILE -c 'line'
			}
			if w.none != "" && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], w.none) {
				return running{}
			}
			var value string
			var at int
			switch {
			case w.line != "" && (a == "--command" || a == "-"+w.line):
				at = i + 1
			case w.line != "" && strings.HasPrefix(a, "--command="):
				value, at = a[len("--command="):], i
			case w.line != "" && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], w.line):
				// -qc 'line' or -cLINE
				j := strings.Index(a[1:], w.line) + 2
				if j < len(a) {
					value, at = a[j:], i
				} else {
					at = i + 1
				}
			default:
				continue
			}
			if at == i+1 {
				if at >= len(argv) {
					return running{}
				}
				value = argv[at]
			}
			if c.info[at]&wDynamic != 0 {
				return running{opaque: "it runs a command line built at run time"}
			}
			return running{lines: []string{value}}
		}
	}
	if w.noArgv {
		return running{stdin: w.shell}
	}
	at := w.command(argv)
	if at == 0 && w.shell {
		return running{stdin: true}
	}
	return running{at: at}
}

// command returns where the command after the wrapper's options,
// assignments and leading operands starts in argv; 0 if there is none.
func (w wrapper) command(argv []string) int {
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
		return 0
	}
	return i
}

// runners are options of otherwise plain programs whose value is a
// command they run (tar -I 'zstd -19', ssh -o ProxyCommand=…, vim -c '!…').
var runners = map[string][]string{
	"tar":   {"-I", "--use-compress-program", "--to-command", "--checkpoint-action=exec", "--info-script", "-F", "--new-volume-script", "--rsh-command"},
	"rsync": {"-e", "--rsh", "--rsync-path"},
	"scp":   {"-S", "-o ProxyCommand", "-o LocalCommand"},
	"sftp":  {"-S", "-o ProxyCommand", "-o LocalCommand"},
	"ssh":   {"-o ProxyCommand", "-o LocalCommand", "-o KnownHostsCommand", "-o RemoteCommand"},
	"sort":  {"--compress-program"},
	"split": {"--filter"},
	"man":   {"-P", "--pager", "-H", "--html"},
	"zip":   {"-TT", "--unzip-command"},
	"vim":   {"-c", "--cmd", "+"},
	"vi":    {"-c", "--cmd", "+"},
	"nvim":  {"-c", "--cmd", "+"},
	"ex":    {"-c", "--cmd", "+"},
	"view":  {"-c", "--cmd", "+"},
	"less":  {"+"},
	"emacs": {"--eval", "-eval", "--execute", "-l", "--load", "-f", "--funcall"},
	"make":  {"SHELL", "--eval", "MAKESHELL"},
	"go":    {"-toolexec", "-exec"},
}

// optionRunner: the commands a runner option gives, read as command lines
// when they parse (a vim command with ! or system() is not shown).
func optionRunner(c cmd, opts []string) running {
	var r running
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		for _, o := range opts {
			opt, sub, _ := strings.Cut(o, " ") // "-o ProxyCommand"
			value, at, ok := "", i, false
			switch {
			case o == "+" && strings.HasPrefix(a, "+"):
				value, ok = a[1:], true
			case o == "SHELL" || o == "MAKESHELL":
				if strings.HasPrefix(a, o+"=") {
					return running{opaque: "it runs its recipes with a shell the line names"}
				}
			case sub != "":
				v := ""
				if a == opt && i+1 < len(c.argv) {
					v, at = c.argv[i+1], i+1
				} else if strings.HasPrefix(a, opt) {
					v = a[len(opt):]
				}
				if k, val, found := strings.Cut(v, "="); found && strings.EqualFold(strings.TrimSpace(k), sub) {
					value, ok = val, true
				} else if strings.EqualFold(strings.TrimSpace(strings.SplitN(v, " ", 2)[0]), sub) {
					value, ok = strings.SplitN(v+" ", " ", 2)[1], true
				}
			case a == o:
				if i+1 < len(c.argv) {
					value, at, ok = c.argv[i+1], i+1, true
				}
			case strings.HasPrefix(a, o+"="):
				value, ok = a[len(o)+1:], true
			case len(o) == 2 && o[1] != '-' && strings.HasPrefix(a, o) && len(a) > 2 && !strings.HasPrefix(a, "--"):
				value, ok = a[2:], true
			}
			if !ok {
				continue
			}
			if c.info[at]&wDynamic != 0 {
				return running{opaque: "it runs a command (" + o + ") only known at run time"}
			}
			if n := name(c.argv[0]); n == "vim" || n == "vi" || n == "nvim" || n == "ex" || n == "view" || n == "less" || n == "emacs" {
				v := strings.TrimLeft(value, ": ")
				if l, found := strings.CutPrefix(v, "!"); found {
					r.lines = append(r.lines, l)
				} else if strings.ContainsAny(v, "!") || strings.Contains(v, "system") || strings.Contains(v, "shell") || strings.Contains(v, "delete") || strings.Contains(v, "call") || strings.Contains(v, "lua") || strings.Contains(v, "py") || n == "emacs" {
					return running{opaque: "the editor runs a command the line does not show"}
				}
				continue
			}
			r.guesses = append(r.guesses, value)
		}
	}
	return r
}

// env runs its command, or with -S/--split-string the command line its
// string splits into, followed by the remaining words.
func env(c cmd) running {
	argv := c.argv
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		var split string
		var ok bool
		at := i
		switch {
		case a == "" || a == "--" || a == "-" || (a[0] != '-' && !isAssignment(a)):
			return running{at: wrappers["env"].command(argv)}
		case strings.HasPrefix(a, "--split-string="):
			split, ok = a[len("--split-string="):], true
		case a == "--split-string" && i+1 < len(argv):
			i++
			split, ok, at = argv[i], true, i
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if j := strings.IndexAny(a[1:], "uCS"); j >= 0 {
				opt, value := a[1+j], a[2+j:]
				if value == "" && i+1 < len(argv) {
					i++
					value, at = argv[i], i
				}
				split, ok = value, opt == 'S'
			}
		}
		if ok {
			if !c.literal(at) {
				return running{opaque: "env -S splits a string only known at run time"}
			}
			rest := []string{split}
			for _, r := range argv[i+1:] {
				q, err := syntax.Quote(r, syntax.LangBash)
				if err != nil {
					return running{opaque: "env -S runs words that cannot be read back"}
				}
				rest = append(rest, q)
			}
			return running{lines: []string{strings.Join(rest, " ")}}
		}
	}
	return running{}
}

// su -c 'line' runs line in the user's shell.
func su(c cmd) running {
	argv := c.argv
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		var line string
		at := i
		switch {
		case a == "-c" || a == "--command":
			if i+1 >= len(argv) {
				return running{}
			}
			line, at = argv[i+1], i+1
		case strings.HasPrefix(a, "--command="):
			line = a[len("--command="):]
		case strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--"):
			line = a[2:]
		case a == "-s" || a == "-g" || a == "-G" || a == "-w" || a == "--shell" || a == "--group" || a == "--supp-group" || a == "--whitelist-environment":
			i++
			continue
		default:
			continue
		}
		if c.info[at]&wDynamic != 0 {
			return running{opaque: "it runs a command line built at run time"}
		}
		return running{lines: []string{line}}
	}
	return running{stdin: true} // a login shell reading its commands from stdin
}

// at and batch read a job's command line from standard input, or -f FILE.
func atJob(c cmd) running {
	if parseFlags(c.argv, c.info).set('f') {
		return running{opaque: "it runs a script file, which the line does not show"}
	}
	if parseFlags(c.argv, c.info).set('l', 'r', 'd', 'c') {
		return running{}
	}
	return running{stdin: true}
}

// parallel runs its command words as a shell command line per input.
func parallel(c cmd) running {
	at := wrappers["parallel"].command(c.argv)
	if at == 0 {
		return running{via: "parallel", stdin: false}
	}
	end := len(c.argv)
	for i := at; i < len(c.argv); i++ {
		if strings.HasPrefix(c.argv[i], ":::") {
			end = i
			break
		}
	}
	if !cmd.literal(cmd{c.argv[:end], c.info[:end]}, at) {
		return running{via: "parallel", opaque: "parallel runs words whose value is only known at run time"}
	}
	return running{via: "parallel", lines: []string{strings.Join(c.argv[at:end], " ")}}
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
