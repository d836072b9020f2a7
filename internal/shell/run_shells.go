package shell

import (
	"slices"
	"strings"
)

// Shells and their builtins: the line bash -c runs, what eval, trap, alias
// and read do, and the variables whose assignment makes a shell run a
// command the line does not show.

// shells run a command line given with -c, or read from standard input.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "csh", "tcsh", "fish", "ksh93", "oksh", "loksh"}

// otherShells are shells whose language is not bash's (zsh's =rm is
// /bin/rm; csh and fish differ more): a line they run is opaque.
var otherShells = []string{"zsh", "csh", "tcsh", "fish"}

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
