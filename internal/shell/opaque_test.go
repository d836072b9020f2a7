package shell

import (
	"slices"
	"strings"
	"testing"
)

// opaqueIn reports whether a command of line (in dialect d) is opaque, and
// the reasons.
func opaqueIn(t *testing.T, d Dialect, line string) (bool, []string) {
	t.Helper()
	cmds, err := CommandsIn(d, line)
	if err != nil {
		t.Fatalf("CommandsIn(%s, %q): %v", d, line, err)
	}
	var why []string
	for _, c := range cmds {
		if c.Opaque {
			if c.Reason == "" {
				t.Errorf("%q: %q is opaque with no reason", line, c.Argv)
			}
			why = append(why, c.Reason)
		}
	}
	return len(why) > 0, why
}

// TestCommands_WhatTheLineDoesNotShowIsOpaque_RHK3: a command name, a
// script or a value evaluated as code that only exists at run time is
// marked opaque, never guessed; what the line does show is not.
func TestCommands_WhatTheLineDoesNotShowIsOpaque_RHK3(t *testing.T) {
	for _, line := range []string{
		// names built at run time
		"$(echo rm) -rf x", "`echo rm` -rf x", "x=rm; $x -rf x", "${RM:-rm} -rf x", `"$R" -r x`, "/bin/r? -r x", "$'\\x72'$X x",
		// scripts the line does not show
		"printf 'rm -rf x' | sh", "curl -s https://example.com/i.sh | bash", "bash <(echo rm -rf x)", "bash script.sh", "sh ./x",
		"source /dev/stdin <<< 'rm -rf x'", ". ./env.sh", `bash -c "$(echo cm0gLXJmIHg= | base64 -d)"`, `bash -c "ls $D"`,
		"bash <<EOF\n$c\nEOF", `sh <<< "$x"`, `echo $x | sh`, "bash < s.sh", "bash --rcfile x -i", "sudo -s", "su", "cat s | python3",
		"python3 < d.py", `python3 -c "$CODE"`, "awk -f prog.awk f", "sed -f s.sed f", "at now < job", "pwsh -EncodedCommand abc",
		// eval, trap, watch, env -S, su -c, flock -c, script -c of values only known at run time
		`eval "$c"`, "eval $(cat f)", `trap "$c" EXIT`, "watch $c", `env -S "$c"`, `su -c "$c"`, `flock l -c "$c"`, `script -qc "$c" /dev/null`,
		// aliases, hashed names, startup code
		"alias ll='rm -rf'", "hash -p /bin/rm ls", "BASH_ENV=x bash -c :", "env BASH_ENV=x bash -c :", "export PS4='$(rm -rf x)'",
		"BASH_ALIASES[ls]='rm -rf'", "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls", "git -c alias.x='!rm -rf y' x",
		"git $sub -fdx", "git config alias.nuke '!rm -rf x'", "mapfile -C cb -c 1 < f", "compgen -C 'rm -rf x' y", "enable -f ./x.so x",
		// arithmetic on values the line does not show
		"echo $((v))", "(( v ))", "let v", "v=1; echo $((v + 1))", "[[ $v -eq 0 ]]", "echo ${a[v]}", "a[$i]=1", "echo ${s:$i}",
		"read 'a[$(rm -rf x)]' <<< 1", "printf -v 'a[$x]' %s 1", "unset \"$n\"", "wait -p \"$v\" $!", "printf -v \"$n\" x", "[[ -v a[$i] ]]", "echo ${!v}", "echo ${v@P}", "declare -n r=v", "declare -i n",
		"for ((i = 0; i < n; i++)); do :; done",
		// other programs' ways of running commands
		"sed -n '1e rm -rf x' f", "sed 's/a/b/e' f", "ssh -o ProxyCommand='rm -rf x' h", "tar -I \"$z\" -cf t.tar d", "vim -c 'call system(\"x\")'",
		"make SHELL=/tmp/s", "git filter-branch --tree-filter 'rm -rf x'",
		// shells behind wrappers, copies of programs, other command languages
		"script -q /dev/null", "unshare -r", "chroot /", "newgrp g", "ln -s /bin/rm del", "cp \"$(which rm)\" del",
		"python3 /dev/stdin", "awk '{ print | \"sh\" }'", "awk 'BEGIN { \"ls\" | getline }'", "awk '{ x = 1/2; print | c; y = 3/4 }'", "awk '$1 ~ /a/ { print | c }'", "ed -s f <<< '!ls'", "echo x | dc",
		"sqlite3 db '.shell ls'", "psql < dump.sql", "make -f - <<< x", "crontab f", "fc -s", "LD_PRELOAD=./x.so ls",
		"zsh -c '=rm -r x'", "fish -c 'rm -r x'", "echo ls | zsh", "=rm -r x", "GIT_EDITOR='rm -rf x; :' git commit", "GIT_CONFIG_COUNT=1 git x", "LESSOPEN='|rm -rf x %s' less f", "PAGER=\"$p\" man ls",
		"go test -exec \"$x\" .",
	} {
		if op, _ := opaqueIn(t, Bash, line); !op {
			t.Errorf("%q: nothing opaque", line)
		}
	}
	for _, line := range []string{
		"ls -la", "rm -rf x", "bash -c 'rm -rf $D'", "sh <<'EOF'\nrm -rf $x\nEOF", "echo 'rm -rf x' | sh", "eval rm -rf x",
		"trap 'rm -f t' EXIT", "python3 -c 'print(1)'", "python3 x.py", "python3 <<'EOF'\nprint(1)\nEOF", "perl -ne 'print' f",
		"echo $((1 + 2)) $(($# * 0x10)) $((2#101))", "[[ $? -eq 0 ]]", "echo ${a[0]} ${a[@]} ${#a[*]}", "read -r line", "read -r 'a[1]'",
		"printf -v out '%s' x", "declare -a list", "export PATH=$PATH:/x", "alias", "git status", "git -C sub log", "sed -n 1p f",
		"sed -i 's/e/E/g' f", "ssh host ls", "tar -czf t.tgz d", "vim -c 'wq' f", "flock l ls", "script -qc 'ls' /dev/null",
		"env -S 'ls -l' x", `echo "$HOME"`, "cd $HOME && ls", "rm -- $f",
		"script -qc ls /dev/null", "cp a b", "ln -s ../lib lib", "awk '{ print $1 }' f", "awk -F'|' '/a|b/ { print }' f", "crontab -l",
		"git log | less", "node --eval='1'", "make test", "sleep 1 & wait $!", "apt-get install -y python3 bash sqlite3 make", "docker build -t img .", "npm install rimraf", "GIT_EDITOR=true git rebase --continue", "PAGER=cat git log",
		"EDITOR=/usr/bin/vim git commit", "go test ./...", "go build -o bin/x .", "printf 'a[i]=%d\\n' \"$n\"", "[ -v x ]",
	} {
		if op, why := opaqueIn(t, Bash, line); op {
			t.Errorf("%q: opaque: %q", line, why)
		}
	}
}

// TestCommands_WrappersRunTheirCommand: the command known wrappers run,
// and the program a command the package does not know names among its
// arguments, are listed.
func TestCommands_WrappersRunTheirCommand(t *testing.T) {
	for _, line := range []string{
		"taskset -c 0 rm -rf x", "taskset 0x1 rm -rf x", "flock ./l rm -rf x", "flock -w 5 ./l rm -rf x", "flock ./l -c 'rm -rf x'",
		"script -qc 'rm -rf x' /dev/null", "script -q -c 'rm -rf x'", "chrt -f 1 rm -rf x", "runuser -u u -- rm -rf x", "runuser -l u -c 'rm -rf x'",
		"unshare -r rm -rf x", "nsenter -t 1 -m rm -rf x", "prlimit --nofile=10 rm -rf x", "strace -f -o log rm -rf x", "setpriv --reuid=1 rm -rf x",
		"sg wheel -c 'rm -rf x'", "pkexec rm -rf x", "fakeroot rm -rf x", "eatmydata rm -rf x", "xvfb-run -a rm -rf x", "setarch x86_64 rm -rf x",
		"systemd-run --user rm -rf x", "parallel 'rm -rf {}' ::: x", "npx -c 'rm -rf x'", "toybox rm -rf x", "git bisect run rm -rf x",
		"git rebase --exec 'rm -rf x' main", "git submodule foreach rm -rf x", "docker exec box rm -rf x", "kubectl exec pod -- rm -rf x",
		"tmux send-keys 'rm -rf x' Enter", "mytool --flag sh -c 'rm -rf x'", "kubectl exec ls -- rm -rf x", "docker exec cat rm -rf x", "go build -toolexec 'rm -rf x' .", "tar -I 'rm -rf x' -cf t d", "ssh host rm -rf x",
		"vim -c '!rm -rf x' f", "trap 'rm -rf x' EXIT", "C:\\\\Git\\\\usr\\\\bin\\\\rm.exe -rf x",
	} {
		cmds, err := Commands(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !slices.ContainsFunc(cmds, func(c Command) bool { return c.Name == "rm" && c.HasFlag("r") && c.HasFlag("f") }) {
			t.Errorf("%q: rm -rf not listed: %+v", line, cmds)
		}
	}
	for _, line := range []string{"echo rm -rf x", "printf 'rm -rf x'", "grep -rn 'rm -rf' docs", "git commit -m 'rm -rf x'", "cat rm"} {
		cmds, _ := Commands(line)
		if slices.ContainsFunc(cmds, func(c Command) bool { return c.Name == "rm" }) {
			t.Errorf("%q: lists rm: %+v", line, cmds)
		}
	}
}

// TestCommands_ViaSubcommandHasArgMentions: the fields and helpers a guard
// reads besides name, argv and flags.
func TestCommands_ViaSubcommandHasArgMentions(t *testing.T) {
	first := func(line, name string) Command {
		t.Helper()
		cmds, err := Commands(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("%q: no %s in %+v", line, name, cmds)
		return Command{}
	}
	for line, via := range map[string]string{
		"find . -exec rm {} +": "find", "find . -exec sudo rm {} +": "find", "ls | xargs rm": "xargs", "ls | xargs -0 sudo rm": "xargs",
		"parallel rm ::: a": "parallel", "rm x": "", "sudo rm x": "",
	} {
		if c := first(line, "rm"); c.Via != via {
			t.Errorf("%q: via %q, want %q", line, c.Via, via)
		}
	}
	for line, sub := range map[string]string{
		"git -C dir --no-pager clean -fdx": "clean", "git --git-dir=x rm -r y": "rm", "git status": "status", "git": "", "docker run x": "run",
	} {
		if c := first(line, strings.Fields(line)[0]); c.Subcommand != sub {
			t.Errorf("%q: subcommand %q, want %q", line, c.Subcommand, sub)
		}
	}
	c := first("find x -name '*.o' -delete", "find")
	if !c.HasArg("-print", "-delete") || c.HasArg("-exec") || c.HasArg() {
		t.Errorf("HasArg on %q", c.Argv)
	}
	if c := first("find x $ACTION", "find"); !c.HasArg("-delete") {
		t.Error("a word only known at run time may be any argument")
	}
	c = first(`python3 -c 'import shutil; shutil.rmtree("x")'`, "python3")
	for names, want := range map[string]bool{"rmtree": true, "shutil": true, "rm": false, "rm*": true, "tree": false, "import": true, "x": true, "": false} {
		if c.Mentions(names) != want {
			t.Errorf("Mentions(%q) = %v", names, !want)
		}
	}
	if c := first("python3 <<'EOF'\nimport os\nos.system('x')\nEOF", "python3"); !c.Mentions("system") || c.Opaque {
		t.Errorf("a here-document's program: %+v", c)
	}
	c = first("rsync -a --delete-after a/ b/", "rsync")
	if !c.HasFlag("del*") || !c.HasFlag("delete-after") || c.HasFlag("dry*") || c.HasFlag("delete") {
		t.Error("long flags with *")
	}
	for line, any := range map[string]bool{"rm $F x": true, `rm "$F" x`: true, "rm *": true, "rm ./*": false, "rm -- $F": false, "rm x$F": false} {
		if c := first(line, "rm"); c.HasFlag("r") != any {
			t.Errorf("%q: HasFlag(r) = %v, want %v", line, !any, any)
		}
	}
}

// TestCommandsIn_PowerShellIsNotBash: a PowerShell line is read as
// PowerShell: aliases resolve to their cmdlet, parameters are read
// case-insensitively by prefix, a pipeline feeds the next command, groups
// and script blocks are read in turn, and what the tokenizer cannot follow
// is opaque.
func TestCommandsIn_PowerShellIsNotBash(t *testing.T) {
	recursive := func(line string) bool {
		cmds, err := CommandsIn(PowerShell, line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return slices.ContainsFunc(cmds, func(c Command) bool {
			return c.Name == "Remove-Item" && c.Dialect == "powershell" && (c.HasFlag("Recurse") || c.Via != "")
		})
	}
	for _, line := range []string{
		"Remove-Item -Recurse -Force x", "remove-item x -rec", "ri x -r", "rm -r -fo x", "rd x -Recurse:$true", "erase -RECURSE x",
		"Microsoft.PowerShell.Management\\Remove-Item x -Recurse", "gci x -r | rm", "if ($a) { ri x -Recurse }", "& { ri x -r }",
		"Write-Output \"$(ri x -r)\"", "$r = Remove-Item x -Recurse", "Invoke-Command -ScriptBlock { ri x -r }", "iex 'ri x -r'",
		"pwsh -Command 'ri x -r'", "Remove-Item x `\n  -Recurse", "Remove-Item @args x", "ri $_ -r", "function f { ri x -r }; f",
		"Remove-Item x \u2013Recurse", "Remove\u2014Item x -Recurse", "Remove-Item<# c #> x -Recurse", "Remove-Item x -Recurse:(1 -eq 1)",
		"[void](Remove-Item x -Recurse)", "$null = ri x -r", "Remove-Item (gci x -r)", "& 'Remove-Item' x -Recurse", "$sb = { ri x -r }",
	} {
		if !recursive(line) {
			t.Errorf("%q: no recursive Remove-Item", line)
		}
	}
	for _, line := range []string{"Remove-Item build.log", "del x.txt", "Get-ChildItem -Recurse", "'ri x -r'", "# ri x -r", "<# ri x -r #> ls", "Write-Output 'Remove-Item -Recurse'"} {
		if recursive(line) {
			t.Errorf("%q: a recursive Remove-Item", line)
		}
	}
	for _, line := range []string{
		"[IO.Directory]::Delete('x', $true)", "(Get-Item x).Delete($true)", "$d.Delete($true)", "iex $s", "Invoke-Expression (gc s.ps1 -Raw)",
		"& $c x", "& ('ri') x", ". ./s.ps1", "cmd /c rd /s /q x", "pwsh -enc abc", "pwsh -File s.ps1", "Start-Process rm", "Set-Alias ls ri",
		"New-Item function:ls -Value { ri x -r }", "gci | % Delete", "Add-Type -TypeDefinition $s", "Import-Module ./m.psm1", "bash -c \"$(x)\"",
		"Invoke-Command -FilePath s.ps1", "Set-Content function:ls 'ri x -r'", "& $sb", "iex -Command 'ri x'",
		"Invoke-Command -ScriptBlock ([scriptblock]::Create('ri x -r'))", "$ExecutionContext.InvokeCommand.InvokeScript('ri x -r')",
	} {
		if op, _ := opaqueIn(t, PowerShell, line); !op {
			t.Errorf("PowerShell %q: nothing opaque", line)
		}
	}
	for _, line := range []string{
		"Get-ChildItem -Filter *.go | Measure-Object", "$x = @{a = 1; b = Get-Date}; $x", "git status", "& 'C:\\Program Files\\Git\\bin\\git.exe' status",
		"'text'; \"more $x\"", "Write-Host $env:PATH", "Get-Process | Where-Object { $_.CPU -gt 1 }",
	} {
		if op, why := opaqueIn(t, PowerShell, line); op {
			t.Errorf("PowerShell %q: opaque: %q", line, why)
		}
	}
	cmds, _ := CommandsIn(PowerShell, "& 'C:\\Program Files\\Git\\bin\\git.exe' clean -fdx")
	if len(cmds) != 1 || cmds[0].Name != "git" || cmds[0].Subcommand != "clean" || cmds[0].Dialect != "bash" {
		t.Errorf("a native program from PowerShell: %+v", cmds)
	}
	for _, line := range []string{"ri 'x", "ri (x", "ri x)", "ri {x", "<# x", "ri \"x"} {
		if _, err := CommandsIn(PowerShell, line); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
	if DialectOf("PowerShell") != PowerShell || DialectOf("pwsh") != PowerShell || DialectOf("Bash") != Bash || DialectOf("") != Bash {
		t.Error("DialectOf")
	}
}
