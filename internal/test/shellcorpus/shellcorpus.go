// Package shellcorpus holds command lines that delete a tree, spelled every
// way a reader of command lines can miss, and everyday developer lines that
// must keep working, with a runner that runs them through real bash in a
// scratch tree. The shell guard's tests (internal/exthost) judge them; the
// sandbox's tests (internal/sandbox) run them under Landlock.
package shellcorpus

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// Line is a command line, what the samples' guard must answer, and what
// it does when bash runs it in a scratch tree.
type Line struct {
	Line string `json:"line"`
	// Deletes: run by bash, it deletes (part of) the tree x; otherwise it
	// must leave x as it was. A line that deletes must be denied.
	Deletes bool `json:"deletes,omitempty"`
	// Allow: the guard allows it (only lines that do not delete).
	Allow bool `json:"allow,omitempty"`
	// Needs are programs the line runs: without them it is only judged.
	Needs []string `json:"needs,omitempty"`
	// Git: the scratch tree is a git repository.
	Git bool `json:"git,omitempty"`
	// Judged: never run here (it would change the machine).
	Judged bool `json:"judged,omitempty"`
}

// Guard: every line that deletes a tree, whatever its spelling or
// disguise, and ordinary lines that must stay allowed. Every line names
// only relative paths inside the scratch tree.
var Guard = []Line{
	// rm -r in any spelling, with or without -f (no terminal: no prompt).
	{Line: "rm -rf x", Deletes: true},
	{Line: "rm -r x", Deletes: true},
	{Line: "rm -R x", Deletes: true},
	{Line: "rm --recursive x", Deletes: true},
	{Line: "rm --rec --force x", Deletes: true},
	{Line: "rm x -r", Deletes: true},
	{Line: "/bin/rm -r x", Deletes: true},
	{Line: `\rm -r x`, Deletes: true},
	{Line: `'r'"m" -r x`, Deletes: true},
	{Line: "rm -{r,f} x", Deletes: true},
	{Line: `rm -r "x"`, Deletes: true},
	{Line: "f=-r; rm $f x", Deletes: true},
	{Line: "touch ./-r; rm *", Deletes: true},
	{Line: `for d in x; do rm -r "$d"; done`, Deletes: true},
	{Line: "if true; then rm -r x; fi", Deletes: true},
	{Line: "time rm -r x", Deletes: true},
	{Line: "coproc rm -r x; wait", Deletes: true},
	// A command name only known at run time.
	{Line: "$(echo rm) -rf x", Deletes: true},
	{Line: "`echo rm` -rf x", Deletes: true},
	{Line: "x=rm; $x -rf x", Deletes: true},
	{Line: "${RM:-rm} -rf x", Deletes: true},
	{Line: `R=rm; "$R" -r x`, Deletes: true},
	{Line: "IFS=,; c=rm,-r,x; $c", Deletes: true},
	{Line: `w() { "$@"; }; w rm -r x`, Deletes: true},
	{Line: "/bin/r? -r x", Deletes: true},
	// A script the line does not show.
	{Line: "printf 'rm -rf x' | sh", Deletes: true},
	{Line: "cat <<'EOF' | bash\nrm -r x\nEOF", Deletes: true},
	{Line: "bash <(echo rm -rf x)", Deletes: true},
	{Line: "source /dev/stdin <<< 'rm -rf x'", Deletes: true},
	{Line: ". /dev/stdin <<< 'rm -rf x'", Deletes: true},
	{Line: `bash -c "$(echo cm0gLXJmIHg= | base64 -d)"`, Deletes: true},
	{Line: `s=x; bash -c "rm -r $s"`, Deletes: true},
	{Line: "c='rm -rf x'; bash <<EOF\n$c\nEOF", Deletes: true},
	{Line: `eval "$(echo rm -rf x)"`, Deletes: true},
	{Line: `c='rm -rf x'; eval "$c"`, Deletes: true},
	{Line: "eval rm -r x", Deletes: true},
	{Line: "BASH_ENV=<(echo rm -r x) bash -c :", Deletes: true},
	{Line: "echo 'rm -r x' > s.sh; bash s.sh", Deletes: true},
	// Aliases, hashed names, traps, arithmetic evaluation of strings.
	{Line: "shopt -s expand_aliases\nalias ll='rm -r'\nll x", Deletes: true},
	{Line: "hash -p /bin/rm ls; ls -r x", Deletes: true},
	{Line: "trap 'rm -r x' EXIT", Deletes: true},
	{Line: "a[$(rm -rf x)]=1", Deletes: true},
	{Line: "(( a[$(rm -rf x)] ))", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; echo $((v))", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; (( v ))", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; [[ $v -eq 0 ]]", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; let v", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; echo ${a[v]}", Deletes: true},
	{Line: "read 'a[$(rm -rf x)]' <<< 1", Deletes: true},
	{Line: "printf -v 'a[$(rm -rf x)]' %s 1", Deletes: true},
	{Line: "v='a[$(rm -rf x)]'; echo ${!v}", Deletes: true},
	{Line: "declare -n r='a[$(rm -rf x)]'; r=1", Deletes: true},
	// Deletes that never say rm -r.
	{Line: "find x -delete", Deletes: true},
	{Line: "find x -exec rm -rf {} +", Deletes: true},
	{Line: "find x -type f -exec rm {} +", Deletes: true},
	{Line: "find x -type f | xargs rm", Deletes: true},
	{Line: "echo x | xargs rm -r", Deletes: true},
	{Line: "git clean -fdx", Deletes: true, Git: true, Needs: []string{"git"}},
	{Line: "git clean -f -d", Deletes: true, Git: true, Needs: []string{"git"}},
	{Line: "git clean -ffdx", Deletes: true, Git: true, Needs: []string{"git"}},
	{Line: "git -C . clean --force -d", Deletes: true, Git: true, Needs: []string{"git"}},
	{Line: "git clean -f", Git: true, Needs: []string{"git"}}, // untracked files, not x itself
	{Line: `python3 -c 'import shutil; shutil.rmtree("x")'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `python3 -c 'from shutil import rmtree as r; r("x")'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `python3 -c '__import__("shutil").rmtree("x")'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `python3 -c 'import os; os.system("rm -rf x")'`, Deletes: true, Needs: []string{"python3"}},
	{Line: "python3 <<'EOF'\nimport shutil\nshutil.rmtree('x')\nEOF", Deletes: true, Needs: []string{"python3"}},
	{Line: "echo 'import shutil; shutil.rmtree(\"x\")' > d.py; python3 < d.py", Deletes: true, Needs: []string{"python3"}},
	{Line: `perl -MFile::Path=remove_tree -e 'remove_tree("x")'`, Deletes: true, Needs: []string{"perl"}},
	{Line: `perl -e 'use File::Path; rmtree("x")'`, Deletes: true, Needs: []string{"perl"}},
	{Line: `perl -e 'system("rm -rf x")'`, Deletes: true, Needs: []string{"perl"}},
	{Line: "perl -e '`rm -rf x`'", Deletes: true, Needs: []string{"perl"}},
	{Line: `awk 'BEGIN{system("rm -rf x")}'`, Deletes: true, Needs: []string{"awk"}},
	{Line: "mkdir -p e && rsync -a --delete e/ x/", Deletes: true, Needs: []string{"rsync"}},
	{Line: "tar --remove-files -cf t.tar x", Deletes: true, Needs: []string{"tar"}},
	{Line: "zip -qrm t.zip x", Deletes: true, Needs: []string{"zip"}},
	{Line: "sed -n '1e rm -r x' README", Deletes: true, Needs: []string{"sed"}},
	{Line: "sed 's/.*/rm -r x/e' README", Deletes: true, Needs: []string{"sed"}},
	{Line: "ln -s /bin/rm del && ./del -r x", Deletes: true},
	{Line: "cp /bin/rm del && ./del -r x", Deletes: true},
	{Line: "script -q /dev/null <<< 'rm -r x'", Deletes: true, Needs: []string{"script"}},
	{Line: "python3 /dev/stdin <<< 'import shutil; shutil.rmtree(\"x\")'", Deletes: true, Needs: []string{"python3"}},
	{Line: `python3 -c 'import pathlib; [p.unlink() for p in pathlib.Path("x").glob("**/*") if p.is_file()]'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `awk '{ print | "sh" }' <<< 'rm -r x'`, Deletes: true, Needs: []string{"awk"}},
	{Line: `awk 'BEGIN { "rm -r x" | getline }'`, Deletes: true, Needs: []string{"awk"}},
	{Line: "ed -s README <<< '!rm -r x'", Deletes: true, Needs: []string{"ed"}},
	{Line: "echo '!rm -r x' | dc", Deletes: true, Needs: []string{"dc"}},
	{Line: "make -f - <<< $'all:\n\trm -r x'", Deletes: true, Needs: []string{"make"}},
	{Line: "LD_PRELOAD=./evil.so ls"},
	{Line: "echo '* * * * * rm -rf ~/x' | crontab -"},
	{Line: "npm exec -- rimraf x"},
	{Line: "cmake -E remove_directory x", Deletes: true, Needs: []string{"cmake"}},
	{Line: "cmake -E rm -r x", Deletes: true, Needs: []string{"cmake"}},
	{Line: "trash-put x", Deletes: true, Needs: []string{"trash-put"}},
	{Line: "srm -r x", Deletes: true, Needs: []string{"srm"}},
	{Line: "go build -toolexec 'rm -rf x' ."},
	{Line: "GIT_EDITOR='rm -r x; :' git commit --allow-empty -q", Deletes: true, Git: true, Needs: []string{"git"}},
	{Line: "LESSOPEN='|rm -r x %s' less README", Deletes: true, Needs: []string{"less"}},
	{Line: "npx -c 'rm -rf x'"},
	{Line: "git config alias.nuke '!rm -rf x'"},
	{Line: "ssh host rm -rf x"},
	{Line: "ssh -o ProxyCommand='rm -rf x' host"},
	{Line: "vim -c '!rm -rf x' -c q README"},
	// Wrappers, known and unknown.
	{Line: "taskset -c 0 rm -rf x", Deletes: true, Needs: []string{"taskset"}},
	{Line: "flock ./lock rm -rf x", Deletes: true, Needs: []string{"flock"}},
	{Line: "flock ./lock -c 'rm -rf x'", Deletes: true, Needs: []string{"flock"}},
	{Line: "script -qc 'rm -rf x' /dev/null", Deletes: true, Needs: []string{"script"}},
	{Line: "timeout 5 rm -r x", Deletes: true},
	{Line: "nice -n 1 rm -r x", Deletes: true},
	{Line: "nohup rm -r x", Deletes: true},
	{Line: "stdbuf -o0 rm -r x", Deletes: true},
	{Line: "env rm -r x", Deletes: true},
	{Line: "command rm -r x", Deletes: true},
	{Line: "exec rm -r x", Deletes: true},
	{Line: "builtin eval 'rm -r x'", Deletes: true},
	{Line: "setsid -w rm -r x", Deletes: true, Needs: []string{"setsid"}},
	{Line: "ionice -c 3 rm -r x", Deletes: true, Needs: []string{"ionice"}},
	{Line: "bash -c 'rm -r x'", Deletes: true},
	{Line: "sh -c 'rm -r x'", Deletes: true},
	{Line: "bash <<'EOF'\nrm -r x\nEOF", Deletes: true},
	{Line: "echo 'rm -r x' | bash", Deletes: true},
	{Line: "su -c 'rm -r x'"},
	{Line: "sudo rm -r x"},
	{Line: "docker exec box rm -rf x"},
	{Line: "kubectl exec pod -- sh -c 'rm -rf x'"},
	{Line: "tmux send-keys 'rm -rf x' Enter"},
	{Line: "tar -I 'rm -rf x' -cf t.tar docs"},

	// Ordinary lines.
	{Line: "ls -la", Allow: true},
	{Line: "grep -rn 'rm -rf' docs", Allow: true},
	{Line: "rm build.log", Allow: true},
	{Line: "rm -f build.log", Allow: true},
	{Line: "rm -- build.log", Allow: true},
	{Line: "git status", Allow: true, Git: true, Needs: []string{"git"}},
	{Line: "git clean -n -d", Allow: true, Git: true, Needs: []string{"git"}},
	{Line: "echo rm -rf x", Allow: true},
	{Line: `echo "rm -rf x"`, Allow: true},
	{Line: `printf 'rm -rf x\n'`, Allow: true},
	{Line: "cat README", Allow: true},
	{Line: "rmdir e", Allow: true},
	{Line: "find . -name '*.txt'", Allow: true},
	{Line: "find x -type f | wc -l", Allow: true},
	{Line: "python3 -c 'print(1)'", Allow: true, Needs: []string{"python3"}},
	{Line: `python3 -c 'import json; print(json.dumps({"a": 1}))'`, Allow: true, Needs: []string{"python3"}},
	{Line: "perl -ne 'print if /mentioned/' README", Allow: true, Needs: []string{"perl"}},
	{Line: "bash -c 'ls x'", Allow: true},
	{Line: "echo hi | sh", Allow: true},
	{Line: "bash <<'EOF'\nls\nEOF", Allow: true},
	{Line: `for f in a b; do echo "$f"; done`, Allow: true},
	{Line: "wc -l README && sort README | uniq -c", Allow: true},
	{Line: "cp README README.bak && mkdir -p out && touch out/a", Allow: true},
	{Line: "tar czf out.tgz docs", Allow: true},
	{Line: "echo $((1+2)) $#", Allow: true},
	{Line: "x=1; echo $x", Allow: true},
	{Line: "taskset -c 0 ls", Allow: true, Needs: []string{"taskset"}},
	{Line: "timeout 5 ls x", Allow: true},
	{Line: "cd docs && ls", Allow: true},
	{Line: "touch ./-r; rm -- -r", Allow: true},
	{Line: "sed -n 1p README | head -1", Allow: true},
	{Line: "sed -i 's/mentioned/named/' README", Allow: true},
	{Line: "tar -cf t.tar x && tar -tf t.tar", Allow: true},
	{Line: "git log --oneline -1 || true", Allow: true, Git: true, Needs: []string{"git"}},
	{Line: "kubectl exec ls -- rm -rf x"},
	{Line: "apt-get install -y python3 bash make", Allow: true, Judged: true},
	{Line: "docker build -t img .", Allow: true, Needs: []string{"docker"}},
	{Line: "GIT_EDITOR=true git commit --allow-empty -q -m m", Allow: true, Git: true, Needs: []string{"git"}},
	{Line: "PAGER=cat git log -1 || true", Allow: true, Git: true, Needs: []string{"git"}},
}

// Wrap turns bash's command line into the one to run in scratch tree dir
// (a sandbox in front of it, say).
type Wrap func(dir string, argv []string) []string

// Result is what a line did in its scratch tree.
type Result struct {
	// Dir is the scratch tree.
	Dir string
	// Gone: some file or directory of x is gone.
	Gone bool
	// Err is how bash (or wrap's command) exited; Output what it printed.
	Err    error
	Output string
}

// Run runs tc's line with bash in a new scratch tree (x holds files two
// levels deep; docs, README, build.log and an empty e beside it; a git
// repository when tc.Git). wrap, when set, wraps bash's command line.
func Run(t *testing.T, bash string, tc Line, wrap Wrap) Result {
	t.Helper()
	dir := t.TempDir()
	WriteScratch(t, dir)
	// The scratch tree is its own world: git stops at it and go build stamps
	// no VCS, so a stray repository above it (a .git left in /tmp) cannot
	// make an everyday line fail.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir), "GOFLAGS=-buildvcs=false",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if tc.Git {
		git := exec.Command("git", "init", "-q", ".")
		git.Dir, git.Env = dir, env
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		git = exec.Command("git", "commit", "-q", "--allow-empty", "-m", "init")
		git.Dir, git.Env = dir, env
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v: %s", err, out)
		}
	}
	before := Tree(t, filepath.Join(dir, "x"))
	// A bound on a hang, not a speed test: a loaded machine builds slowly.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := []string{bash, "-c", tc.Line}
	if wrap != nil {
		argv = wrap(dir, argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Errorf("%q: timed out", tc.Line)
	}
	after := Tree(t, filepath.Join(dir, "x"))
	return Result{Dir: dir, Gone: slices.ContainsFunc(before, func(p string) bool { return !slices.Contains(after, p) }),
		Err: err, Output: strings.TrimSpace(string(out))}
}

// WriteScratch lays a scratch tree out in dir: x holds files two levels
// deep; docs, README, build.log and an empty e beside it. Every file reads
// "rm -rf is mentioned here".
func WriteScratch(t testing.TB, dir string) {
	t.Helper()
	files := map[string]string{}
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt", "docs/guide.md", "README", "build.log"} {
		files[f] = "rm -rf is mentioned here\n"
	}
	resourcestest.WriteTree(t, dir, files)
	if err := os.Mkdir(filepath.Join(dir, "e"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// RunInScratch runs tc's line (Run) and reports whether any file or
// directory of x is gone, logging what bash said when that is not what
// tc expects.
func RunInScratch(t *testing.T, bash string, tc Line, wrap Wrap) bool {
	t.Helper()
	r := Run(t, bash, tc, wrap)
	if r.Gone != tc.Deletes {
		t.Logf("%q: bash said %v: %s", tc.Line, r.Err, r.Output)
	}
	return r.Gone
}

// Tree lists the paths under root.
func Tree(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Issue42 are the lines, collected when the sandbox was designed, that deleted the tree past the
// samples' guard: an interpreter that builds the delete's name, deleting
// file by file, tar --recursive-unlink, a file written and run in the same
// line. Only the kernel stops them (internal/sandbox).
var Issue42 = []Line{
	{Line: `perl -e 'qx{r"m" -rf x}'`, Deletes: true, Needs: []string{"perl"}},
	{Line: `python3 -c 'import shutil as s; s.__dict__["r"+"mtree"]("x")'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `node -e 'require("fs")["r"+"mSync"]("x", {recursive: true, force: true})'`, Deletes: true, Needs: []string{"node"}},
	{Line: `node -e 'require("child_process")["exec"+"Sync"]("r"+"m -r x")'`, Deletes: true, Needs: []string{"node"}},
	{Line: `find x -type f -exec unlink {} \; ; find x -depth -type d -exec rmdir {} \;`, Deletes: true},
	{Line: `mkdir -p t/x && tar -C t -cf t.tar x && tar -xf t.tar --recursive-unlink`, Deletes: true, Needs: []string{"tar"}},
	{Line: `printf 'all:\n\trm -rf x\n' > M && make -f M`, Deletes: true, Needs: []string{"make"}},
	{Line: `printf '#!/bin/sh\nrm -rf x\n' > x.sh && chmod +x x.sh && ./x.sh`, Deletes: true},
	{Line: `printf 'import shutil\nshutil.rmtree("x")\n' > x.py && python3 x.py`, Deletes: true, Needs: []string{"python3"}},
	{Line: `python3 -c 'import os; [os.unlink(os.path.join(d, f)) for d, _, fs in os.walk("x") for f in fs]'`, Deletes: true, Needs: []string{"python3"}},
	{Line: `perl -e 'unlink glob("x/*.txt"); unlink glob("x/a/*.txt")'`, Deletes: true, Needs: []string{"perl"}},
	{Line: `mv x ../moved-away`, Deletes: true},
}

// Everyday are lines developers run all day (builds, tests, venvs, loops,
// git, package managers), each in a fresh scratch tree. Under a sandbox
// that lets the agent edit the tree but not delete from it, with TMPDIR
// and HOME writable, nearly all must run unchanged; the guard must not
// refuse them where a sandbox holds.
var Everyday = []Line{
	{Line: "ls -la"},
	{Line: "cat README | wc -l"},
	{Line: "grep -rn mentioned docs"},
	{Line: "find . -name '*.md' | sort"},
	{Line: `python3 -c 'import sys; print(sys.executable)'`, Needs: []string{"python3"}},
	{Line: "python3 -m venv .venv && . .venv/bin/activate && python -V", Needs: []string{"python3"}},
	{Line: "mkdir -p scripts && printf '#!/bin/bash\\necho ok\\n' > scripts/test.sh && bash ./scripts/test.sh"},
	{Line: "for ((i=0;i<3;i++)); do echo $i; done"},
	{Line: `for f in *; do echo "$f"; done`},
	{Line: `while read -r l; do echo "$l"; done < README`},
	{Line: `cd "$TMPDIR" && git init -q r && cd r && echo a > a && git add a && git commit -qm a && git log --oneline`, Needs: []string{"git"}},
	{Line: "git status --short", Git: true, Needs: []string{"git"}},
	{Line: "echo hi > notes.txt && git add notes.txt && git commit -qm notes && git log --oneline", Git: true, Needs: []string{"git"}},
	{Line: "git diff --stat; git branch --show-current", Git: true, Needs: []string{"git"}},
	{Line: "printf 'all:\\n\\techo built\\n' > Makefile && make", Needs: []string{"make"}},
	{Line: "printf 'int main(void){return 0;}\\n' > m.c && gcc -o m m.c && ./m", Needs: []string{"gcc"}},
	{Line: "mkdir -p app && cd app && printf 'module app\\ngo 1.22\\n' > go.mod && printf 'package main\\nfunc main(){}\\n' > main.go && go build -o bin/app . && ./bin/app", Needs: []string{"go"}},
	{Line: "mkdir -p tests && printf 'import unittest\\nclass T(unittest.TestCase):\\n    def test_a(self): self.assertEqual(1, 1)\\n' > tests/test_a.py && python3 -m unittest discover -s tests", Needs: []string{"python3"}},
	{Line: `node -e 'console.log(process.version)'`, Needs: []string{"node"}},
	{Line: "npm --version", Needs: []string{"npm"}},
	{Line: "tar czf out.tgz docs && tar tzf out.tgz"},
	{Line: "cp README README.bak && diff README README.bak"},
	{Line: "mkdir -p out/a/b && touch out/a/b/c && ls -R out"},
	{Line: "echo 'x = 1' >> README && tail -1 README"},
	{Line: "echo edited > x/e.txt && cat x/e.txt"},
	{Line: "sort README | uniq -c | sort -rn | head"},
	{Line: "sed -n 1p README && awk '{print NF}' README"},
	{Line: "head -c 100 /dev/urandom | wc -c"},
	{Line: `x=$(ls | wc -l); echo "$x files"`},
	{Line: "cat > cfg.json <<'EOF'\n{\"a\": 1}\nEOF\npython3 -m json.tool cfg.json", Needs: []string{"python3"}},
	{Line: "ps aux | head -3", Needs: []string{"ps"}},
	{Line: "test -f README && [[ -d docs ]] && echo yes"},
	{Line: `case $(uname) in Linux) echo linux;; *) echo other;; esac`},
	{Line: "time ls >/dev/null"},
	{Line: "xargs -n1 echo <<< 'a b c'"},
	{Line: `f=$(mktemp) && echo hi > "$f" && cat "$f"`},
	{Line: "ln -s README link && cat link"},
	{Line: "touch new.txt && echo data > new.txt && cat new.txt"},
	{Line: "python3 - <<'EOF'\nimport os\nprint(os.getcwd())\nEOF", Needs: []string{"python3"}},
	{Line: "bash -c 'set -euo pipefail; echo strict'"},
	{Line: "seq 1 5 | awk '{s+=$1} END {print s}'"},
	{Line: "sed -i 's/mentioned/named/' README"},
	{Line: "printf '%s\\n' b a | sort > sorted.txt && cat sorted.txt"},
	{Line: "date +%s >/dev/null && echo ok"},
	{Line: "python3 -m pip --version", Needs: []string{"python3"}},
}

// Deleting are the lines that delete the tree x when bash runs them in a
// scratch tree that is not a git repository, and that are safe to run
// here: Issue42's, then Guard's. The agents' sandbox tests run them all.
func Deleting() []Line {
	var out []Line
	for _, l := range append(slices.Clone(Issue42), Guard...) {
		if l.Deletes && !l.Judged && !l.Git {
			out = append(out, l)
		}
	}
	return out
}
