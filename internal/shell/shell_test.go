package shell

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func argvs(t *testing.T, line string) [][]string {
	t.Helper()
	cmds, err := Commands(line)
	if err != nil {
		t.Fatalf("Commands(%q): %v", line, err)
	}
	out := make([][]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Argv
	}
	return out
}

// TestCommands_FindsEverySimpleCommandTheLineRuns: the commands of every
// construct a command line can hide a command in, with their argv after
// quote removal, in order, each line's before those of the lines it runs.
func TestCommands_FindsEverySimpleCommandTheLineRuns(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{"ls -la", [][]string{{"ls", "-la"}}},
		{"cd /w; make && rm -rf build || echo failed", [][]string{{"cd", "/w"}, {"make"}, {"rm", "-rf", "build"}, {"echo", "failed"}}},
		{"cat a | grep b |& sort", [][]string{{"cat", "a"}, {"grep", "b"}, {"sort"}}},
		{"(cd x && rm -r -f y) & { ls; }", [][]string{{"cd", "x"}, {"rm", "-r", "-f", "y"}, {"ls"}}},
		{"echo $(rm -rf a) `rm -rf b` <(rm -rf c)", [][]string{{"echo", "$(rm -rf a)", "`rm -rf b`", "<(rm -rf c)"}, {"rm", "-rf", "a"}, {"rm", "-rf", "b"}, {"rm", "-rf", "c"}}},
		{"FOO=1 BAR=$(id) rm -rf x", [][]string{{"rm", "-rf", "x"}, {"id"}}},
		{"X=1", nil},
		{`'r'"m" -r\f "$HOME/b c" $'a\tb'`, [][]string{{"rm", "-rf", "$HOME/b c", "a\tb"}}},
		{"/bin/rm -rf /", [][]string{{"/bin/rm", "-rf", "/"}}},
		{"rm -{r,f} x", [][]string{{"rm", "-r", "-f", "x"}}},
		{"{rm,-rf,/}", [][]string{{"rm", "-rf", "/"}}},
		{"if true; then rm -rf x; fi; for f in a; do rm $f; done; f() { rm -rf y; }", [][]string{{"true"}, {"rm", "-rf", "x"}, {"rm", "$f"}, {"rm", "-rf", "y"}}},
		{"case $x in a) rm -rf z;; esac; while false; do :; done", [][]string{{"rm", "-rf", "z"}, {"false"}, {":"}}},
		{"bash -c 'rm -rf x'", [][]string{{"bash", "-c", "rm -rf x"}, {"rm", "-rf", "x"}}},
		{`sh -lc 'cd /w && rm -rf $D' name arg`, [][]string{{"sh", "-lc", "cd /w && rm -rf $D", "name", "arg"}, {"cd", "/w"}, {"rm", "-rf", "$D"}}},
		{`bash -c "bash -c 'rm -rf x'"`, [][]string{{"bash", "-c", "bash -c 'rm -rf x'"}, {"bash", "-c", "rm -rf x"}, {"rm", "-rf", "x"}}},
		{"bash -o pipefail -c 'ls | wc'", [][]string{{"bash", "-o", "pipefail", "-c", "ls | wc"}, {"ls"}, {"wc"}}},
		{"bash script.sh -c 'rm -rf x'", [][]string{{"bash", "script.sh", "-c", "rm -rf x"}}},
		{"bash <<'EOF'\nrm -rf $x\nEOF\n", [][]string{{"bash"}, {"rm", "-rf", "$x"}}},
		{"sh <<< 'rm -rf x'", [][]string{{"sh"}, {"rm", "-rf", "x"}}},
		{`echo "rm -rf x" | sh`, [][]string{{"echo", "rm -rf x"}, {"sh"}, {"rm", "-rf", "x"}}},
		{`eval "rm" -rf x`, [][]string{{"eval", "rm", "-rf", "x"}, {"rm", "-rf", "x"}}},
		{"su -c 'rm -rf x' root", [][]string{{"su", "-c", "rm -rf x", "root"}, {"rm", "-rf", "x"}}},
		{"sudo -u root -E rm -rf /", [][]string{{"sudo", "-u", "root", "-E", "rm", "-rf", "/"}, {"rm", "-rf", "/"}}},
		{"env -i X=1 rm -rf /", [][]string{{"env", "-i", "X=1", "rm", "-rf", "/"}, {"rm", "-rf", "/"}}},
		{"env -S 'rm -rf' /tmp/x", [][]string{{"env", "-S", "rm -rf", "/tmp/x"}, {"rm", "-rf", "/tmp/x"}}},
		{"timeout -s KILL 5 nice -n 3 nohup rm -rf x", [][]string{
			{"timeout", "-s", "KILL", "5", "nice", "-n", "3", "nohup", "rm", "-rf", "x"}, {"nice", "-n", "3", "nohup", "rm", "-rf", "x"},
			{"nohup", "rm", "-rf", "x"}, {"rm", "-rf", "x"}}},
		{"find . -name '*.o' -exec rm -rf {} \\; -print", [][]string{{"find", ".", "-name", "*.o", "-exec", "rm", "-rf", "{}", ";", "-print"}, {"rm", "-rf", "{}"}}},
		{"find . -type d -execdir sudo rm -r -f {} +", [][]string{{"find", ".", "-type", "d", "-execdir", "sudo", "rm", "-r", "-f", "{}", "+"}, {"sudo", "rm", "-r", "-f", "{}"}, {"rm", "-r", "-f", "{}"}}},
		{"ls | xargs -0 -I{} rm -rf {}", [][]string{{"ls"}, {"xargs", "-0", "-I{}", "rm", "-rf", "{}"}, {"rm", "-rf", "{}"}}},
		{"busybox rm -rf x", [][]string{{"busybox", "rm", "-rf", "x"}, {"rm", "-rf", "x"}}},
		{"watch -n 1 rm -rf x", [][]string{{"watch", "-n", "1", "rm", "-rf", "x"}, {"rm", "-rf", "x"}}},
		{"sudo bash <<EOF\nrm -rf /\nEOF\n", [][]string{{"sudo", "bash"}, {"bash"}, {"rm", "-rf", "/"}}},
		{"grep -rn 'rm -rf' docs", [][]string{{"grep", "-rn", "rm -rf", "docs"}}},
		{`echo "rm -rf"`, [][]string{{"echo", "rm -rf"}}},
	} {
		if got := argvs(t, tc.line); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("Commands(%q)\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

func TestCommands_NameIsTheProgram(t *testing.T) {
	for line, want := range map[string]string{
		"/bin/rm -rf x": "rm", "./rm": "rm", `\rm x`: "rm", `"$RM" -rf x`: "$RM", "$(which rm) -rf": "$(which rm)",
		"/usr/bin/$X": "/usr/bin/$X", `$'\x72m' -rf x`: "rm", "`which rm` -rf": "`which rm`", `"" x`: "",
	} {
		cmds, err := Commands(line)
		if err != nil || len(cmds) == 0 || cmds[0].Name != want {
			t.Errorf("Commands(%q)[0].Name = %+v, %v; want %q", line, cmds, err, want)
		}
	}
}

// TestHasFlag_EverySpellingOfRecursiveForce: short flags alone or in
// clusters, long flags and their abbreviations, anywhere before "--".
func TestHasFlag_EverySpellingOfRecursiveForce(t *testing.T) {
	recursiveForce := func(line string) bool {
		cmds, err := Commands(line)
		if err != nil {
			t.Fatalf("Commands(%q): %v", line, err)
		}
		for _, c := range cmds {
			if c.Name == "rm" && c.HasFlag("r", "R", "recursive") && c.HasFlag("f", "force") {
				return true
			}
		}
		return false
	}
	for _, line := range []string{
		"rm -rf x", "rm -fr x", "rm -r -f x", "rm -Rf x", "rm -fR x", "rm --recursive --force x", "rm --force --recursive x",
		"rm -r --force x", "rm --recursive -f x", "rm x -rf", "rm -d -r -v -f x", "rm --rec --for x", "rm --r --f x",
		"bash -c 'rm -rf x'", "/bin/rm -rf /", "env X=1 rm -rf /", "sudo rm -rf /", "sudo -u root env -i nice rm -rf /",
		"rm -{r,f} x", `r\m -r\f x`, "find . -exec rm -rf {} +", "echo 'rm -rf x' | sh", "x=$(rm -rf y)",
	} {
		if !recursiveForce(line) {
			t.Errorf("%q: recursive force remove not found", line)
		}
	}
	for _, line := range []string{
		"grep -rn 'rm -rf' docs", `echo "rm -rf"`, "rm build.log", "rm -r build", "rm -f x", "ls -la", "rm -- -rf", "rm -i -v x",
		"rm --recursive-foo --f x", "git rm -rf x", "echo rm -rf x", "printf 'rm -rf x'",
	} {
		if recursiveForce(line) {
			t.Errorf("%q: reported as a recursive force remove", line)
		}
	}
	c := Command{Argv: []string{"x", "-a", "--long=v"}}
	c.flags = parseFlags(c.Argv, nil)
	for _, tc := range []struct {
		names []string
		want  bool
	}{
		{[]string{"a"}, true}, {[]string{"-a"}, true}, {[]string{"A"}, false}, {[]string{"--a"}, false},
		{[]string{"long"}, true}, {[]string{"--longer"}, true}, {[]string{"lon"}, false}, {[]string{"l"}, false},
		{[]string{"", "-", "--"}, false}, {[]string{"é"}, false}, {nil, false},
	} {
		if got := c.HasFlag(tc.names...); got != tc.want {
			t.Errorf("HasFlag(%q) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

// TestCommands_UnparsableAndOverTheBoundsIsAnError: a line that does not
// parse, or breaks a bound, is an ErrUnparsable error, never a partial list.
func TestCommands_UnparsableAndOverTheBoundsIsAnError(t *testing.T) {
	deep := func(open, closing string, n int) string {
		return strings.Repeat(open, n) + "x" + strings.Repeat(closing, n)
	}
	nestedBash := func(levels int) string {
		line := "rm -rf x"
		for range levels {
			line = "bash -c " + quote(line)
		}
		return line
	}
	for name, line := range map[string]string{
		"unclosed quote":      "rm -rf 'x",
		"unclosed subshell":   "(rm -rf x",
		"bad syntax":          "rm -rf x; then",
		"too long":            strings.Repeat("a", MaxInput+1),
		"nested subshells":    deep("(", ")", 400),
		"nested groups":       deep("{ ", "; }", 400),
		"nested substitution": "echo " + deep("$(", ")", 400),
		"nested arithmetic":   "echo $((" + deep("(", ")", 100) + "))",
		"nested ifs":          deep("if a; then ", "; fi", 400),
		"a long pipeline":     strings.Repeat("a | ", MaxTreeDepth) + "a",
		"nested bash -c":      nestedBash(MaxDepth + 1),
		"too many commands":   strings.Repeat("a;", MaxCommands+1),
		"too many wrappers":   strings.Repeat("nice ", MaxWrappers+1) + "rm -rf x",
		"brace bomb":          "echo " + strings.Repeat("{a,b}", 20),
		"unparsable inner":    "bash -c 'rm -rf (x'",
	} {
		cmds, err := Commands(line)
		if !errors.Is(err, ErrUnparsable) || cmds != nil {
			t.Errorf("%s: %d commands, err %v; want ErrUnparsable", name, len(cmds), err)
		}
	}
	for name, line := range map[string]string{
		"nested subshells":      deep("(", ")", 64),
		"nested arithmetic":     "echo $((" + deep("(", ")", 16) + "))",
		"a pipeline":            strings.Repeat("a | ", 100) + "a",
		"quoted parentheses":    "cat <<'EOF'\n" + strings.Repeat(":(\n", 10000) + "EOF\n",
		"a long heredoc":        "cat > f.go <<'EOF'\n" + strings.Repeat("func f(x int) (int, error) {\n\treturn g(h(x)), nil // :( {\n}\n", (MaxInput-32)/60) + "EOF\n",
		"MaxCommands commands":  strings.Repeat("a;", MaxCommands),
		"MaxWrappers wrappers":  strings.Repeat("nice ", MaxWrappers) + "rm -rf x",
		"bash -c MaxDepth deep": nestedBash(MaxDepth),
	} {
		if _, err := Commands(line); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
