package shell

import (
	"errors"
	"slices"
	"testing"
)

// FuzzCommands: whatever the line, Commands answers without panicking, the
// same way twice, within its bounds: either commands, each with a program
// name taken from its argv, or an ErrUnparsable error and nothing else.
func FuzzCommands(f *testing.F) {
	for _, seed := range []string{
		"rm -rf build", "grep -rn 'rm -rf' docs", `echo "rm -rf"`, "bash -c 'rm -fr x'", "sudo -u root env X=1 /bin/rm -r -f /",
		"find . -exec rm -rf {} +", "echo 'rm -rf x' | sh", "bash <<'EOF'\nrm -rf x\nEOF\n", "rm -{r,f} {a..c}", "$'\\x72m' -rf x",
		"x=$(rm -rf y) && (cd z; rm --recursive --force w) | tee log", "eval \"rm -rf $D\"", "((((x))))", "echo ${a:-${b}}",
		"case $x in a) rm -rf y;; esac", "env -S 'rm -rf' x", "xargs -I{} rm -rf {}", "su -c 'rm -rf /'", "rm -rf 'x", "{a,b}{c,d}",
		"$(echo rm) -rf x", "v='a[$(rm -rf x)]'; (( v ))", "echo ${!v} ${a[i]} ${s:1:$n}", "printf 'x' | sh", "bash <(echo x)",
		"taskset -c 0 flock l script -qc 'rm -rf x' /dev/null", "sed -n '1e rm x' f", "docker exec c sh -c 'rm -rf x'", "git -C x clean -fdx",
		"python3 <<'EOF'\nimport shutil\nEOF\n", "ssh -o ProxyCommand=x h ls", "tar -I 'zstd -19' -cf t d", "vim -c '!ls' f",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, again, ok := readTwice(t, func() ([]Command, error) { return Commands(line) })
		if !ok {
			return
		}
		for i, c := range cmds {
			if len(c.Argv) == 0 || c.Name != name(c.Argv[0]) || !slices.Equal(c.Argv, again[i].Argv) {
				t.Fatalf("command %d: %+v (again %+v)", i, c, again[i])
			}
			c.HasFlag("r", "recursive", "-f", "--force", "")
		}
	})
}

// FuzzCommandsPowerShell: the PowerShell reader answers without panicking,
// the same way twice: commands or an ErrUnparsable error and nothing else.
func FuzzCommandsPowerShell(f *testing.F) {
	for _, seed := range []string{
		"Remove-Item -Recurse -Force x", "rm -r -fo x", "gci x -r | % { ri $_ -r }", "[IO.Directory]::Delete('x', $true)",
		"$p = @{Recurse=$true}; ri x @p", "iex 'ri x -r'", "& ('r' + 'i') x", "Write-Output \"$(ri x -r)\"", "<# c #> ls # x",
		"@'\nhere\n'@", "@\"\n$(ri x)\n\"@", "ri x `\n -r", "cmd /c rd /s x", "pwsh -c 'ri x -r'", "if ($a) { ri x } else { ls }",
		"ri 'x", "ri (x", "}{", "$(", "@(1,2) | % { $_ }", "a 2>&1 > f *>> g",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, again, ok := readTwice(t, func() ([]Command, error) { return CommandsIn(PowerShell, line) })
		if !ok {
			return
		}
		for i, c := range cmds {
			if len(c.Argv) == 0 || !slices.Equal(c.Argv, again[i].Argv) || (c.Opaque && c.Reason == "") {
				t.Fatalf("command %d: %+v (again %+v)", i, c, again[i])
			}
			c.HasFlag("Recurse", "r", "")
			c.HasArg("x")
			c.Mentions("rm*")
		}
	})
}

// readTwice reads a line twice and fails unless both answers agree and are
// either at most MaxCommands commands or ErrUnparsable with none; ok is
// whether there are commands to check further.
func readTwice(t *testing.T, read func() ([]Command, error)) (cmds, again []Command, ok bool) {
	t.Helper()
	cmds, err := read()
	again, err2 := read()
	if (err == nil) != (err2 == nil) || len(cmds) != len(again) {
		t.Fatalf("two answers: %d commands, %v; then %d, %v", len(cmds), err, len(again), err2)
	}
	if err != nil {
		if !errors.Is(err, ErrUnparsable) || cmds != nil {
			t.Fatalf("error %v with %d commands, want ErrUnparsable and none", err, len(cmds))
		}
		return nil, nil, false
	}
	if len(cmds) > MaxCommands {
		t.Fatalf("%d commands, over MaxCommands", len(cmds))
	}
	return cmds, again, true
}
