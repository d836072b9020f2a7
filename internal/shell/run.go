package shell

import (
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// running is what a command runs besides itself.
type running struct {
	// at is where the command a wrapper runs starts in its argv (sudo rm
	// -rf x runs rm -rf x, at 1); 0 when it runs none.
	at int
	// lines are command lines it runs (bash -c 'rm -rf x', eval, su -c).
	lines []string
	// pwsh: lines are PowerShell (pwsh -Command).
	pwsh bool
	// guesses are words of a program the package does not know that read
	// as command lines (tmux send-keys 'rm -rf x' Enter).
	guesses []string
	// stdin: it reads a script from standard input (a shell, or with code
	// an interpreter such as python3).
	stdin, code bool
	// script is the program an interpreter reads from standard input.
	script string
	// execs are the commands find runs (-exec rm -rf {} ;).
	execs []cmd
	// opaque says why the line does not show what the command does.
	opaque string
	// via is set for a program that completes the argv of the command it
	// runs: xargs, parallel.
	via string
	// name overrides the command's name (a PowerShell alias's cmdlet).
	name string
	// escaper: fed a script on standard input, it is opaque (escapers).
	escaper bool
	// alsos are commands a program the package does not know may run
	// (unknown): guessed, each to the end of its argv.
	alsos []cmd
}

func (r running) lineDialect() Dialect {
	if r.pwsh {
		return PowerShell
	}
	return Bash
}

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

// shells run a command line given with -c, or read from standard input.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "csh", "tcsh", "fish", "ksh93", "oksh", "loksh"}

// otherShells are shells whose language is not bash's (zsh's =rm is
// /bin/rm; csh and fish differ more): a line they run is opaque.
var otherShells = []string{"zsh", "csh", "tcsh", "fish"}

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

// runs says what c runs besides itself.
func runs(c cmd) running {
	argv := c.argv
	name := name(argv[0])
	var r running
	switch {
	case slices.Contains(shells, name):
		r := shell(c)
		if len(r.lines) > 0 || r.stdin {
			if slices.Contains(otherShells, name) {
				return running{opaque: name + " runs a line in its own language, which the guard reads as bash only"}
			}
		}
		return r
	case strings.HasPrefix(argv[0], "=") && len(argv[0]) > 1:
		return running{opaque: "zsh expands =name to a program's path"}
	case isInterpreter(name):
		return interpreter(c)
	case name == "pwsh" || name == "powershell" || name == "pwsh.exe" || name == "powershell.exe":
		return pwshProgram(c)
	case name == "eval":
		if len(argv) > 1 {
			if !c.literal(1) {
				return running{opaque: "eval runs words whose value is only known at run time"}
			}
			return running{lines: []string{strings.Join(argv[1:], " ")}}
		}
	case name == "source" || name == ".":
		return running{opaque: "it runs a script file, which the line does not show"}
	case name == "alias":
		for i, a := range argv[1:] {
			if strings.Contains(a, "=") || c.info[i+1]&wDynamic != 0 {
				return running{opaque: "it defines an alias, which changes what a command name runs"}
			}
		}
	case name == "fc":
		return running{opaque: "fc runs commands from the history, which the line does not show"}
	case name == "hash" || name == "enable" || name == "compgen" || name == "complete" || name == "bind":
		if f := parseFlags(argv, c.info); f.set('p') || f.set('f') || f.set('C') || f.set('F') || f.set('x') || f.set('s') || f.set('e') {
			return running{opaque: name + " can make a name run another command, or run one the line does not show"}
		}
	case name == "trap":
		return trap(c)
	case name == "newgrp":
		return running{stdin: true}
	case name == "crontab":
		if !parseFlags(c.argv, c.info).set('l') {
			return running{opaque: "crontab schedules commands the line does not show"}
		}
	case name == "make" || name == "gmake":
		for i, a := range argv[1:] {
			if (a == "-f" || a == "--file" || a == "--makefile") && i+2 < len(argv) && (argv[i+2] == "-" || strings.HasPrefix(argv[i+2], "/dev/") || strings.HasPrefix(argv[i+2], "/proc/")) {
				return running{opaque: "make reads a makefile from standard input, which the line does not show"}
			}
		}
		r = optionRunner(c, runners[name])
	case name == "ln" || name == "cp" || name == "install" || name == "link" || name == "mv":
		for i, a := range argv[1:] {
			if copiesProgram(a, c.info[i+1]) {
				return running{opaque: "it copies or links a program under another name, which then runs what the line does not show"}
			}
		}
	case name == "wait":
		// only wait -p NAME takes a variable name
		if i := slices.Index(argv, "-p"); i > 0 && i+1 < len(argv) {
			return variables(cmd{[]string{"wait", argv[i+1]}, []wordInfo{0, c.info[i+1]}})
		}
	case name == "printf" || name == "test" || name == "[":
		// only printf -v NAME and test -v NAME take a variable name
		for i := 1; i+1 < len(argv); i++ {
			if argv[i] == "-v" {
				if r := variables(cmd{[]string{name, argv[i+1]}, []wordInfo{0, c.info[i+1]}}); r.opaque != "" {
					return r
				}
			}
		}
	case name == "mapfile" || name == "readarray" || name == "read" || name == "unset" || name == "getopts":
		return variables(c)
	case name == "at" || name == "batch":
		return atJob(c)
	case name == "su":
		return su(c)
	case name == "find":
		return running{execs: findExecs(c)}
	case name == "env":
		r = env(c)
	case name == "sudo" || name == "doas":
		r = running{at: wrappers[name].command(argv)}
		if r.at == 0 && parseFlags(argv, c.info).set('s', 'i') {
			r.stdin = true // sudo -s with no command: a shell reading stdin
		}
	case name == "watch":
		// watch runs its words joined as a line of sh -c (unless -x).
		if at := (wrapper{short: "nd", long: []string{"interval"}}).command(argv); at > 0 {
			if !c.literal(at) {
				return running{opaque: "watch runs words whose value is only known at run time"}
			}
			return running{lines: []string{strings.Join(argv[at:], " ")}}
		}
	case name == "parallel":
		return parallel(c)
	case name == "git":
		return git(c)
	case name == "sed" || name == "gsed":
		return sed(c)
	case name == "ssh":
		return ssh(c)
	case runners[name] != nil:
		r = optionRunner(c, runners[name])
	default:
		if w, ok := wrappers[name]; ok {
			r = w.run(c)
		} else if !slices.Contains(leaves, name) {
			r = unknown(c)
		}
	}
	if name == "xargs" {
		r.via = "xargs"
	}
	if escapers(name) && r.opaque == "" {
		r.escaper = true
		for i, a := range argv[1:] {
			if c.info[i+1]&wDynamic != 0 || strings.Contains(a, "!") || strings.Contains(a, "shell") || strings.Contains(a, "system") || strings.Contains(a, "exec") {
				r.opaque = name + " runs commands of its own, which may run a shell command"
				break
			}
		}
	}
	if r.opaque == "" {
		r.opaque = dangerousAssignments(c, name)
	}
	return r
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

// copiesProgram: a word naming a program in a system directory, or found
// at run time (cp /bin/rm ./del, ln -s "$(which rm)" del).
func copiesProgram(a string, f wordInfo) bool {
	if f&wDynamic != 0 && (strings.Contains(a, "which") || strings.Contains(a, "command -v") || strings.Contains(a, "type -")) {
		return true
	}
	for _, d := range []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/", "/usr/libexec/"} {
		if strings.HasPrefix(a, d) {
			return true
		}
	}
	return false
}

// escapers are programs that read commands of their own from standard
// input or their arguments, with a way to run a shell command (ed's !,
// gdb's shell, sqlite3's .shell, psql's \!, dc's !): fed a script, or
// given one with !, shell or system, they are opaque.
var escaperNames = []string{"ed", "red", "ex", "vi", "vim", "nvim", "view", "gdb", "lldb", "sqlite3", "mysql", "mariadb", "psql",
	"ftp", "lftp", "sftp", "expect", "dc", "irb", "ghci", "jshell"}

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

// leaves are programs known not to run their arguments as commands; the
// arguments of any other program the package does not know are searched
// for a program they may run (unknown).
var leaves = []string{
	"echo", "printf", "cat", "tac", "ls", "dir", "grep", "egrep", "fgrep", "rg", "ag", "ack", "head", "tail", "less", "more",
	"wc", "sort", "uniq", "cut", "tr", "tee", "touch", "mkdir", "cp", "mv", "ln", "chmod", "chown", "chgrp", "stat", "file",
	"diff", "cmp", "comm", "which", "type", "whereis", "whatis", "man", "help", "info", "true", "false", ":", "cd", "pwd",
	"pushd", "popd", "basename", "dirname", "realpath", "readlink", "date", "sleep", "jq", "yq", "curl", "wget", "tar",
	"zip", "unzip", "gzip", "gunzip", "bzip2", "xz", "zstd", "md5sum", "sha1sum", "sha256sum", "base64", "xxd", "od",
	"hexdump", "column", "paste", "join", "split", "csplit", "fold", "fmt", "nl", "expand", "unexpand", "rev", "seq",
	"yes", "id", "whoami", "groups", "hostname", "uname", "uptime", "ps", "top", "df", "du", "free", "printenv",
	"locale", "tput", "clear", "reset", "set", "shopt", "export", "declare", "local", "readonly", "typeset", "shift",
	"return", "exit", "break", "continue", "jobs", "fg", "bg", "disown", "kill", "ulimit", "umask", "history", "dirs",
	"sed", "tsort", "rmdir", "rm", "unlink", "shred", "mkfifo", "mknod", "install", "rsync", "scp", "dd", "truncate",
	"git", "diffstat", "patch", "make", "go", "gofmt", "cargo", "rustc", "pip", "pip3", "mvn",
	"gradle", "javac", "java", "gcc", "cc", "clang", "ld", "ar", "nm", "objdump", "strings",
	"openssl", "ssh-keygen", "gpg", "tree", "fd", "fdfind", "locate", "iconv", "dos2unix", "unix2dos", "cal", "bc", "dc",
	"expr", "factor", "numfmt", "shuf", "nproc", "lsof", "netstat", "ss", "ip", "ping", "dig", "nslookup", "host",
	"lsblk", "mount", "umount", "sync", "tty", "stty", "logname", "users", "who", "w", "last", "mktemp", "pathchk",
	"getconf", "ldd", "nano", "code", "sum", "cksum", "b2sum", "sha512sum", "diff3", "sdiff", "unalias", "times",
}

// unknown: a program the package does not know may run its arguments as a
// command (docker exec c rm -rf x, kubectl exec p -- rm -rf x, tmux
// send-keys 'rm -rf x' Enter). Which argument starts the command is not
// known either (kubectl exec ls -- rm -rf x: the pod is named ls), so every
// argument that names a program the package knows starts a command it may
// run, to the end of the line; an argument that reads as a command line
// beginning with a known program or a shell builtin is parsed as one when
// it parses. What these commands read on standard input counts only when
// the line feeds it (guessed).
func unknown(c cmd) running {
	var r running
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		if c.info[i]&wDynamic != 0 {
			continue
		}
		if known(name(a)) {
			r.alsos = append(r.alsos, c.from(i))
			continue
		}
		if f := strings.FieldsFunc(a, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()", r) }); len(f) > 1 || (len(f) == 1 && f[0] != a) {
			if known(name(f[0])) || slices.Contains(builtins, f[0]) {
				r.guesses = append(r.guesses, a)
			}
		}
	}
	return r
}

// builtins are shell builtins that run or define code; no other program
// can run them, but a line typed into a shell can.
var builtins = []string{"eval", "source", ".", "alias", "trap", "fc", "hash", "enable", "let", "declare", "typeset", "export", "mapfile", "readarray", "read", "exec", "command", "builtin"}

// known reports whether the package knows what the program named n does.
func known(n string) bool {
	if n == "" || n == "." || slices.Contains(builtins, n) && n != "exec" && n != "command" && n != "builtin" {
		return false
	}
	_, w := wrappers[n]
	return w || slices.Contains(shells, n) || isInterpreter(n) || slices.Contains(leaves, n) || escapers(n) ||
		slices.Contains([]string{"su", "find", "env", "watch", "at", "batch", "pwsh", "powershell", "git", "newgrp", "crontab"}, n) || runners[n] != nil
}

func escapers(n string) bool { return slices.Contains(escaperNames, n) }

// dangerousNames are variables that make a shell run code the line does
// not show, or a name run another command: BASH_ENV and ENV are sourced by
// a new shell, PS4 is expanded (substitutions and all) under set -x,
// PROMPT_COMMAND runs before a prompt; BASH_ALIASES and BASH_CMDS set
// aliases and hashed paths; BASH_FUNC_x%% imports a function.
var dangerousNames = []string{"BASH_ENV", "ENV", "PS4", "PS0", "PS1", "PS2", "PROMPT_COMMAND", "BASH_ALIASES", "BASH_CMDS", "BASH_LOADABLES_PATH", "SHELLOPTS", "BASHOPTS",
	// programs that load or run code a variable names: the dynamic
	// loader, git's configuration, editors and commands, interpreters'
	// startup options
	"LD_PRELOAD", "LD_AUDIT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
	"GIT_ASKPASS", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "PYTHONSTARTUP", "PYTHONINSPECT",
	"LESSOPEN", "LESSCLOSE"}

// commandNames are variables naming a command that programs run (git's
// editor, man's pager): dangerous unless they name a plain program
// (GIT_EDITOR=true, PAGER=cat).
var commandNames = []string{"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER"}

// plainCommands are the values of commandNames that run nothing else.
var plainCommands = []string{"", "true", "false", ":", "cat", "less", "more", "head", "tail", "vi", "vim", "nvim", "nano", "emacs", "code", "ed", "most"}

func dangerousName(n string) bool {
	return slices.Contains(dangerousNames, n) || strings.HasPrefix(n, "BASH_FUNC_") || strings.HasPrefix(n, "GIT_CONFIG_KEY_") || strings.HasPrefix(n, "GIT_CONFIG_VALUE_")
}

// dangerousAssignment reports whether NAME=value makes a program run code
// the line does not show.
func dangerousAssignment(n, value string, dynamic bool) bool {
	if dangerousName(n) {
		return true
	}
	return slices.Contains(commandNames, n) && (dynamic || !slices.Contains(plainCommands, name(strings.TrimSpace(value))))
}

// dangerousAssignments: env and sudo set variables for the command they run.
func dangerousAssignments(c cmd, name string) string {
	if name != "env" && name != "sudo" && name != "doas" {
		return ""
	}
	for i, a := range c.argv[1:] {
		if n, v, ok := strings.Cut(a, "="); ok && dangerousAssignment(n, v, c.info[i+1]&wDynamic != 0) {
			return "it sets " + n + ", which makes a shell run code the line does not show"
		}
	}
	return ""
}

// trap ACTION SIGNAL…: ACTION is a command line run later.
func trap(c cmd) running {
	i := 1
	for i < len(c.argv) && strings.HasPrefix(c.argv[i], "-") && c.argv[i] != "-" {
		if c.argv[i] == "--" {
			i++
			break
		}
		if c.argv[i] == "-p" || c.argv[i] == "-l" || c.argv[i] == "-P" {
			return running{}
		}
		i++
	}
	if i >= len(c.argv) || c.argv[i] == "-" {
		return running{}
	}
	if c.info[i]&wDynamic != 0 {
		return running{opaque: "trap runs a command line built at run time"}
	}
	return running{lines: []string{c.argv[i]}}
}

// variables: builtins that take variable names evaluate an array
// subscript in a name as arithmetic (read 'a[$(rm -rf x)]' runs rm), and
// mapfile -C runs a callback.
func variables(c cmd) running {
	if n := name(c.argv[0]); (n == "mapfile" || n == "readarray") && parseFlags(c.argv, c.info).set('C') {
		return running{opaque: n + " -C runs a callback the line does not show"}
	}
	for i, a := range c.argv[1:] {
		if c.info[i+1]&wDynamic != 0 {
			return running{opaque: "it takes a variable name only known at run time (its subscript would be evaluated)"}
		}
		if j := strings.IndexByte(a, '['); j > 0 && isName(a[:j]) && !literalSubscript(strings.TrimSuffix(a[j+1:], "]")) {
			return running{opaque: "it evaluates an array subscript the line does not show: " + a}
		}
	}
	return running{}
}

// literalSubscript: a number, @ or *.
func literalSubscript(s string) bool {
	s = strings.TrimSpace(s)
	return s == "@" || s == "*" || (s != "" && strings.Trim(s, "0123456789") == "")
}

func isName(s string) bool { return s != "" && isAssignment(s+"=") }

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

// git: -c and --config-env set configuration that can run commands
// (alias.x=!cmd, core.pager, core.sshCommand…); rebase --exec,
// submodule foreach and bisect run run command lines.
func git(c cmd) running {
	argv := c.argv
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-c" || strings.HasPrefix(a, "--config-env") || (strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--")):
			return running{opaque: "git -c sets configuration that can run commands (aliases, pagers, hooks)"}
		case a == "--exec-path" || strings.HasPrefix(a, "--exec-path="):
			return running{opaque: "git --exec-path runs git commands from a directory the line does not show"}
		}
	}
	sub := gitSubcommand(argv)
	if sub == 0 {
		return running{}
	}
	rest := cmd{argv[sub:], c.info[sub:]}
	switch argv[sub] {
	case "rebase":
		for i := 1; i < len(rest.argv); i++ {
			a := rest.argv[i]
			var line string
			at := 0
			switch {
			case (a == "-x" || a == "--exec") && i+1 < len(rest.argv):
				line, at = rest.argv[i+1], i+1
			case strings.HasPrefix(a, "--exec="):
				line, at = a[len("--exec="):], i
			default:
				continue
			}
			if rest.info[at]&wDynamic != 0 {
				return running{opaque: "git rebase --exec runs a command line built at run time"}
			}
			return running{lines: []string{line}}
		}
	case "submodule":
		for i := 1; i < len(rest.argv); i++ {
			if rest.argv[i] == "foreach" {
				if !rest.literal(i + 1) {
					return running{opaque: "git submodule foreach runs a command line built at run time"}
				}
				if i+1 < len(rest.argv) {
					return running{lines: []string{strings.Join(rest.argv[i+1:], " ")}}
				}
			}
		}
	case "bisect":
		if len(rest.argv) > 2 && rest.argv[1] == "run" {
			return running{at: sub + 2}
		}
	case "config":
		for _, a := range rest.argv[1:] {
			k := strings.ToLower(a)
			for _, p := range []string{"alias.", "core.", "filter.", "diff.", "merge.", "credential.", "sequence.", "gpg.", "pager.", "include", "remote."} {
				if strings.HasPrefix(k, p) {
					return running{opaque: "git config " + a + " can make git run commands later"}
				}
			}
		}
	case "filter-branch", "difftool", "mergetool", "daemon", "web--browse":
		return running{opaque: "git " + argv[sub] + " runs commands the line does not show"}
	}
	return running{}
}

// gitSubcommand is the index of git's subcommand, after its global options.
func gitSubcommand(argv []string) int {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--super-prefix" || a == "--list-cmds" || a == "--attr-source":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return 0
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

// shell: sh [options] -c 'line' [name [args]] runs line; without -c and
// without a script operand (or with -s) it reads its script from stdin; a
// script operand is a file the line does not show.
func shell(c cmd) running {
	argv := c.argv
	cFlag, s := false, false
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if c.info[i]&wLeading != 0 {
			return running{opaque: "its options are only known at run time"}
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				return running{opaque: "it reads a startup file, which the line does not show"}
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		for _, o := range a[1:] {
			switch o {
			case 'c':
				cFlag = true
			case 's':
				s = true
			case 'o', 'O':
				i++ // -o pipefail
			}
		}
	}
	switch {
	case cFlag && i < len(argv):
		if c.info[i]&wDynamic != 0 {
			return running{opaque: "it runs a command line built at run time"}
		}
		return running{lines: []string{argv[i]}}
	case cFlag:
		return running{}
	case s || i >= len(argv):
		return running{stdin: true}
	}
	return running{opaque: scriptFile}
}

// scriptFile is why a shell given a script operand is opaque. For a
// guessed command (a program the package does not know may run it) the
// operand is only perhaps a script: apt-get install bash make.
const scriptFile = "it runs a script file, which the line does not show"

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

// pwshProgram: pwsh -Command 'line' or pwsh { block }… runs a PowerShell
// line; -EncodedCommand, -File and a script read from stdin are not shown.
func pwshProgram(c cmd) running {
	argv := c.argv
	for i := 1; i < len(argv); i++ {
		a := strings.ToLower(argv[i])
		if c.info[i]&wDynamic != 0 {
			return running{opaque: "its arguments are only known at run time"}
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "/") {
			return running{opaque: "it runs a script file, which the line does not show"}
		}
		p := strings.TrimLeft(a, "-/")
		switch {
		case p == "":
			return running{stdin: true, pwsh: true}
		case p == "c" || (len(p) >= 3 && strings.HasPrefix("command", p)):
			if i+1 >= len(argv) {
				return running{}
			}
			if argv[i+1] == "-" {
				return running{stdin: true, pwsh: true}
			}
			if !c.literal(i + 1) {
				return running{opaque: "it runs a command line built at run time"}
			}
			return running{lines: []string{strings.Join(argv[i+1:], " ")}, pwsh: true}
		case p == "e" || p == "ec" || (len(p) >= 2 && strings.HasPrefix("encodedcommand", p)):
			return running{opaque: "it runs an encoded command"}
		case p == "f" || (len(p) >= 2 && strings.HasPrefix("file", p)):
			return running{opaque: "it runs a script file, which the line does not show"}
		case strings.HasPrefix("executionpolicy", p) || strings.HasPrefix("workingdirectory", p) || strings.HasPrefix("windowstyle", p) ||
			strings.HasPrefix("outputformat", p) || strings.HasPrefix("inputformat", p) || strings.HasPrefix("settingsfile", p) ||
			strings.HasPrefix("configurationname", p) || strings.HasPrefix("custompipename", p) || p == "psconsolefile" || p == "version":
			i++
		}
	}
	return running{stdin: true, pwsh: true}
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

// findExecs returns the commands of find's -exec, -execdir, -ok and -okdir,
// each up to its ; or +.
func findExecs(c cmd) []cmd {
	var out []cmd
	argv := c.argv
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(argv) && argv[j] != ";" && argv[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, cmd{argv[i+1 : j], c.info[i+1 : j]})
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

// ssh HOST [COMMAND…] runs COMMAND's words, joined, in the remote user's
// shell; -o ProxyCommand and LocalCommand run here.
func ssh(c cmd) running {
	argv := c.argv
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if strings.HasPrefix(a, "-o") {
			v := a[2:]
			if v == "" && i+1 < len(argv) {
				i++
				v = argv[i]
			}
			k := strings.ToLower(strings.TrimSpace(v))
			k, _, _ = strings.Cut(k, "=")
			k, _, _ = strings.Cut(k, " ")
			if k == "proxycommand" || k == "localcommand" || k == "knownhostscommand" || k == "remotecommand" || k == "permitlocalcommand" {
				return running{opaque: "ssh -o " + k + " runs a command the guard does not read"}
			}
			continue
		}
		if strings.ContainsAny(a[len(a)-1:], "bcDEeFIiJLlmOpQRSWw") {
			i++ // the option's value is the next word
		}
	}
	i++ // the host
	if i >= len(argv) {
		return running{}
	}
	if !c.literal(i) {
		return running{opaque: "ssh runs a remote command built at run time"}
	}
	return running{lines: []string{strings.Join(argv[i:], " ")}}
}

// sed: GNU sed's e command and the e flag of s run a shell command; a
// script file (-f) is not shown.
func sed(c cmd) running {
	argv := c.argv
	var scripts []string
	explicit := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--sandbox":
			return running{}
		case a == "-f" || strings.HasPrefix(a, "--file") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f")):
			return running{opaque: "sed runs a script file, which the line does not show"}
		case a == "-e" || a == "--expression":
			if i+1 < len(argv) {
				i++
				if c.info[i]&wDynamic != 0 {
					return running{opaque: "sed runs a script only known at run time"}
				}
				scripts, explicit = append(scripts, argv[i]), true
			}
		case strings.HasPrefix(a, "--expression="):
			scripts, explicit = append(scripts, a[len("--expression="):]), true
		case strings.HasPrefix(a, "-e") && !strings.HasPrefix(a, "--"):
			scripts, explicit = append(scripts, a[2:]), true
		case a == "-l" || a == "--line-length":
			i++
		case len(a) > 1 && a[0] == '-':
		case !explicit && len(scripts) == 0:
			if c.info[i]&wDynamic != 0 {
				return running{opaque: "sed runs a script only known at run time"}
			}
			scripts = append(scripts, a)
		}
	}
	for _, s := range scripts {
		if sedExecutes(s) {
			return running{opaque: "sed's e command runs a shell command"}
		}
	}
	return running{}
}

// sedExecutes reports whether a sed script has an e command or an s
// command with the e flag.
func sedExecutes(s string) bool {
	i := 0
	skipRegex := func(d byte) {
		for i < len(s) && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		i++
	}
	for i < len(s) {
		// an address: numbers, $, /re/, \cREc, first~step, a,b, !
		for i < len(s) {
			switch ch := s[i]; {
			case ch == ' ' || ch == '\t' || ch == ';' || ch == '\n' || ch == '{' || ch == '}' || ch == '!' || ch == ',' || ch == '~' || ch == '+' || ch == '$' || (ch >= '0' && ch <= '9'):
				i++
				continue
			case ch == '/':
				i++
				skipRegex('/')
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case ch == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				skipRegex(d)
				continue
			}
			break
		}
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case 'e':
			return true
		case 's', 'y':
			cmd := s[i]
			i++
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			skipRegex(d)
			skipRegex(d)
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				if cmd == 's' && s[i] == 'e' {
					return true
				}
				if s[i] == 'w' {
					break // a file name to the end of the line
				}
				i++
			}
		default:
			// a, i, c, r, w, b, t, :label… take the rest of the line (or
			// to ; for labels): skip it
			for i < len(s) && s[i] != '\n' && (s[i] != ';' || strings.IndexByte("aicrwRW:", s[i]) >= 0) {
				if s[i] == ';' {
					break
				}
				i++
			}
			if i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		}
		for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '{' {
			i++
		}
	}
	return false
}
