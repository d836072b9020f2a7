package shell

import (
	"slices"
	"strings"
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
