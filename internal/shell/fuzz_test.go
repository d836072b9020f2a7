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
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := Commands(line)
		again, err2 := Commands(line)
		if (err == nil) != (err2 == nil) || len(cmds) != len(again) {
			t.Fatalf("two answers: %d commands, %v; then %d, %v", len(cmds), err, len(again), err2)
		}
		if err != nil {
			if !errors.Is(err, ErrUnparsable) || cmds != nil {
				t.Fatalf("error %v with %d commands, want ErrUnparsable and none", err, len(cmds))
			}
			return
		}
		if len(cmds) > MaxCommands {
			t.Fatalf("%d commands, over MaxCommands", len(cmds))
		}
		for i, c := range cmds {
			if len(c.Argv) == 0 || c.Name != name(c.Argv[0]) || !slices.Equal(c.Argv, again[i].Argv) {
				t.Fatalf("command %d: %+v (again %+v)", i, c, again[i])
			}
			c.HasFlag("r", "recursive", "-f", "--force", "")
		}
	})
}
