package shell

import (
	"slices"
	"strings"
)

// Programs that run commands of their own: git's aliases and hooks, find
// -exec, ssh's remote line, sed's e command, editors and debuggers fed a
// script, a program copied under another name, and programs the package
// does not know.

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

func escapers(n string) bool { return slices.Contains(escaperNames, n) }

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
