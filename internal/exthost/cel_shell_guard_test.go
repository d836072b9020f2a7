package exthost

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

	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// samplesGuard is the expression of the samples' platform guard, read from
// config/samples/platform_extension_guard.yaml itself, so the tests below
// prove the policy that ships.
func samplesGuard(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile("../../config/samples/platform_extension_guard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ext struct {
		Spec struct {
			Hooks []struct {
				Name string `json:"name"`
				CEL  struct {
					Expression string `json:"expression"`
				} `json:"cel"`
			} `json:"hooks"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	for _, h := range ext.Spec.Hooks {
		if h.Name == "no-recursive-delete" {
			return h.CEL.Expression
		}
	}
	t.Fatal("the samples' guard has no hook no-recursive-delete")
	return ""
}

// guardLine is a command line, what the samples' guard must answer, and
// what it does when bash runs it in a scratch tree.
type guardLine struct {
	line string
	// deletes: run by bash, it deletes (part of) the tree x; otherwise it
	// must leave x as it was. A line that deletes must be denied.
	deletes bool
	// allow: the guard allows it (only lines that do not delete).
	allow bool
	// needs are programs the line runs: without them it is only judged.
	needs []string
	// git: the scratch tree is a git repository.
	git bool
	// judged: never run here (it would change the machine).
	judged bool
}

// guardLines: every line that deletes a tree, whatever its spelling or
// disguise, and ordinary lines that must stay allowed. Every line names
// only relative paths inside the scratch tree.
var guardLines = []guardLine{
	// rm -r in any spelling, with or without -f (no terminal: no prompt).
	{line: "rm -rf x", deletes: true},
	{line: "rm -r x", deletes: true},
	{line: "rm -R x", deletes: true},
	{line: "rm --recursive x", deletes: true},
	{line: "rm --rec --force x", deletes: true},
	{line: "rm x -r", deletes: true},
	{line: "/bin/rm -r x", deletes: true},
	{line: `\rm -r x`, deletes: true},
	{line: `'r'"m" -r x`, deletes: true},
	{line: "rm -{r,f} x", deletes: true},
	{line: `rm -r "x"`, deletes: true},
	{line: "f=-r; rm $f x", deletes: true},
	{line: "touch ./-r; rm *", deletes: true},
	{line: `for d in x; do rm -r "$d"; done`, deletes: true},
	{line: "if true; then rm -r x; fi", deletes: true},
	{line: "time rm -r x", deletes: true},
	{line: "coproc rm -r x; wait", deletes: true},
	// A command name only known at run time.
	{line: "$(echo rm) -rf x", deletes: true},
	{line: "`echo rm` -rf x", deletes: true},
	{line: "x=rm; $x -rf x", deletes: true},
	{line: "${RM:-rm} -rf x", deletes: true},
	{line: `R=rm; "$R" -r x`, deletes: true},
	{line: "IFS=,; c=rm,-r,x; $c", deletes: true},
	{line: `w() { "$@"; }; w rm -r x`, deletes: true},
	{line: "/bin/r? -r x", deletes: true},
	// A script the line does not show.
	{line: "printf 'rm -rf x' | sh", deletes: true},
	{line: "cat <<'EOF' | bash\nrm -r x\nEOF", deletes: true},
	{line: "bash <(echo rm -rf x)", deletes: true},
	{line: "source /dev/stdin <<< 'rm -rf x'", deletes: true},
	{line: ". /dev/stdin <<< 'rm -rf x'", deletes: true},
	{line: `bash -c "$(echo cm0gLXJmIHg= | base64 -d)"`, deletes: true},
	{line: `s=x; bash -c "rm -r $s"`, deletes: true},
	{line: "c='rm -rf x'; bash <<EOF\n$c\nEOF", deletes: true},
	{line: `eval "$(echo rm -rf x)"`, deletes: true},
	{line: `c='rm -rf x'; eval "$c"`, deletes: true},
	{line: "eval rm -r x", deletes: true},
	{line: "BASH_ENV=<(echo rm -r x) bash -c :", deletes: true},
	{line: "echo 'rm -r x' > s.sh; bash s.sh", deletes: true},
	// Aliases, hashed names, traps, arithmetic evaluation of strings.
	{line: "shopt -s expand_aliases\nalias ll='rm -r'\nll x", deletes: true},
	{line: "hash -p /bin/rm ls; ls -r x", deletes: true},
	{line: "trap 'rm -r x' EXIT", deletes: true},
	{line: "a[$(rm -rf x)]=1", deletes: true},
	{line: "(( a[$(rm -rf x)] ))", deletes: true},
	{line: "v='a[$(rm -rf x)]'; echo $((v))", deletes: true},
	{line: "v='a[$(rm -rf x)]'; (( v ))", deletes: true},
	{line: "v='a[$(rm -rf x)]'; [[ $v -eq 0 ]]", deletes: true},
	{line: "v='a[$(rm -rf x)]'; let v", deletes: true},
	{line: "v='a[$(rm -rf x)]'; echo ${a[v]}", deletes: true},
	{line: "read 'a[$(rm -rf x)]' <<< 1", deletes: true},
	{line: "printf -v 'a[$(rm -rf x)]' %s 1", deletes: true},
	{line: "v='a[$(rm -rf x)]'; echo ${!v}", deletes: true},
	{line: "declare -n r='a[$(rm -rf x)]'; r=1", deletes: true},
	// Deletes that never say rm -r.
	{line: "find x -delete", deletes: true},
	{line: "find x -exec rm -rf {} +", deletes: true},
	{line: "find x -type f -exec rm {} +", deletes: true},
	{line: "find x -type f | xargs rm", deletes: true},
	{line: "echo x | xargs rm -r", deletes: true},
	{line: "git clean -fdx", deletes: true, git: true, needs: []string{"git"}},
	{line: "git clean -f -d", deletes: true, git: true, needs: []string{"git"}},
	{line: "git clean -ffdx", deletes: true, git: true, needs: []string{"git"}},
	{line: "git -C . clean --force -d", deletes: true, git: true, needs: []string{"git"}},
	{line: "git clean -f", git: true, needs: []string{"git"}}, // untracked files, not x itself
	{line: `python3 -c 'import shutil; shutil.rmtree("x")'`, deletes: true, needs: []string{"python3"}},
	{line: `python3 -c 'from shutil import rmtree as r; r("x")'`, deletes: true, needs: []string{"python3"}},
	{line: `python3 -c '__import__("shutil").rmtree("x")'`, deletes: true, needs: []string{"python3"}},
	{line: `python3 -c 'import os; os.system("rm -rf x")'`, deletes: true, needs: []string{"python3"}},
	{line: "python3 <<'EOF'\nimport shutil\nshutil.rmtree('x')\nEOF", deletes: true, needs: []string{"python3"}},
	{line: "echo 'import shutil; shutil.rmtree(\"x\")' > d.py; python3 < d.py", deletes: true, needs: []string{"python3"}},
	{line: `perl -MFile::Path=remove_tree -e 'remove_tree("x")'`, deletes: true, needs: []string{"perl"}},
	{line: `perl -e 'use File::Path; rmtree("x")'`, deletes: true, needs: []string{"perl"}},
	{line: `perl -e 'system("rm -rf x")'`, deletes: true, needs: []string{"perl"}},
	{line: "perl -e '`rm -rf x`'", deletes: true, needs: []string{"perl"}},
	{line: `awk 'BEGIN{system("rm -rf x")}'`, deletes: true, needs: []string{"awk"}},
	{line: "mkdir -p e && rsync -a --delete e/ x/", deletes: true, needs: []string{"rsync"}},
	{line: "tar --remove-files -cf t.tar x", deletes: true, needs: []string{"tar"}},
	{line: "zip -qrm t.zip x", deletes: true, needs: []string{"zip"}},
	{line: "sed -n '1e rm -r x' README", deletes: true, needs: []string{"sed"}},
	{line: "sed 's/.*/rm -r x/e' README", deletes: true, needs: []string{"sed"}},
	{line: "ln -s /bin/rm del && ./del -r x", deletes: true},
	{line: "cp /bin/rm del && ./del -r x", deletes: true},
	{line: "script -q /dev/null <<< 'rm -r x'", deletes: true, needs: []string{"script"}},
	{line: "python3 /dev/stdin <<< 'import shutil; shutil.rmtree(\"x\")'", deletes: true, needs: []string{"python3"}},
	{line: `python3 -c 'import pathlib; [p.unlink() for p in pathlib.Path("x").glob("**/*") if p.is_file()]'`, deletes: true, needs: []string{"python3"}},
	{line: `awk '{ print | "sh" }' <<< 'rm -r x'`, deletes: true, needs: []string{"awk"}},
	{line: `awk 'BEGIN { "rm -r x" | getline }'`, deletes: true, needs: []string{"awk"}},
	{line: "ed -s README <<< '!rm -r x'", deletes: true, needs: []string{"ed"}},
	{line: "echo '!rm -r x' | dc", deletes: true, needs: []string{"dc"}},
	{line: "make -f - <<< $'all:\n\trm -r x'", deletes: true, needs: []string{"make"}},
	{line: "LD_PRELOAD=./evil.so ls"},
	{line: "echo '* * * * * rm -rf ~/x' | crontab -"},
	{line: "npm exec -- rimraf x"},
	{line: "cmake -E remove_directory x", deletes: true, needs: []string{"cmake"}},
	{line: "cmake -E rm -r x", deletes: true, needs: []string{"cmake"}},
	{line: "trash-put x", deletes: true, needs: []string{"trash-put"}},
	{line: "srm -r x", deletes: true, needs: []string{"srm"}},
	{line: "go build -toolexec 'rm -rf x' ."},
	{line: "GIT_EDITOR='rm -r x; :' git commit --allow-empty -q", deletes: true, git: true, needs: []string{"git"}},
	{line: "LESSOPEN='|rm -r x %s' less README", deletes: true, needs: []string{"less"}},
	{line: "npx -c 'rm -rf x'"},
	{line: "git config alias.nuke '!rm -rf x'"},
	{line: "ssh host rm -rf x"},
	{line: "ssh -o ProxyCommand='rm -rf x' host"},
	{line: "vim -c '!rm -rf x' -c q README"},
	// Wrappers, known and unknown.
	{line: "taskset -c 0 rm -rf x", deletes: true, needs: []string{"taskset"}},
	{line: "flock ./lock rm -rf x", deletes: true, needs: []string{"flock"}},
	{line: "flock ./lock -c 'rm -rf x'", deletes: true, needs: []string{"flock"}},
	{line: "script -qc 'rm -rf x' /dev/null", deletes: true, needs: []string{"script"}},
	{line: "timeout 5 rm -r x", deletes: true},
	{line: "nice -n 1 rm -r x", deletes: true},
	{line: "nohup rm -r x", deletes: true},
	{line: "stdbuf -o0 rm -r x", deletes: true},
	{line: "env rm -r x", deletes: true},
	{line: "command rm -r x", deletes: true},
	{line: "exec rm -r x", deletes: true},
	{line: "builtin eval 'rm -r x'", deletes: true},
	{line: "setsid -w rm -r x", deletes: true, needs: []string{"setsid"}},
	{line: "ionice -c 3 rm -r x", deletes: true, needs: []string{"ionice"}},
	{line: "bash -c 'rm -r x'", deletes: true},
	{line: "sh -c 'rm -r x'", deletes: true},
	{line: "bash <<'EOF'\nrm -r x\nEOF", deletes: true},
	{line: "echo 'rm -r x' | bash", deletes: true},
	{line: "su -c 'rm -r x'"},
	{line: "sudo rm -r x"},
	{line: "docker exec box rm -rf x"},
	{line: "kubectl exec pod -- sh -c 'rm -rf x'"},
	{line: "tmux send-keys 'rm -rf x' Enter"},
	{line: "tar -I 'rm -rf x' -cf t.tar docs"},

	// Ordinary lines.
	{line: "ls -la", allow: true},
	{line: "grep -rn 'rm -rf' docs", allow: true},
	{line: "rm build.log", allow: true},
	{line: "rm -f build.log", allow: true},
	{line: "rm -- build.log", allow: true},
	{line: "git status", allow: true, git: true, needs: []string{"git"}},
	{line: "git clean -n -d", allow: true, git: true, needs: []string{"git"}},
	{line: "echo rm -rf x", allow: true},
	{line: `echo "rm -rf x"`, allow: true},
	{line: `printf 'rm -rf x\n'`, allow: true},
	{line: "cat README", allow: true},
	{line: "rmdir e", allow: true},
	{line: "find . -name '*.txt'", allow: true},
	{line: "find x -type f | wc -l", allow: true},
	{line: "python3 -c 'print(1)'", allow: true, needs: []string{"python3"}},
	{line: `python3 -c 'import json; print(json.dumps({"a": 1}))'`, allow: true, needs: []string{"python3"}},
	{line: "perl -ne 'print if /mentioned/' README", allow: true, needs: []string{"perl"}},
	{line: "bash -c 'ls x'", allow: true},
	{line: "echo hi | sh", allow: true},
	{line: "bash <<'EOF'\nls\nEOF", allow: true},
	{line: `for f in a b; do echo "$f"; done`, allow: true},
	{line: "wc -l README && sort README | uniq -c", allow: true},
	{line: "cp README README.bak && mkdir -p out && touch out/a", allow: true},
	{line: "tar czf out.tgz docs", allow: true},
	{line: "echo $((1+2)) $#", allow: true},
	{line: "x=1; echo $x", allow: true},
	{line: "taskset -c 0 ls", allow: true, needs: []string{"taskset"}},
	{line: "timeout 5 ls x", allow: true},
	{line: "cd docs && ls", allow: true},
	{line: "touch ./-r; rm -- -r", allow: true},
	{line: "sed -n 1p README | head -1", allow: true},
	{line: "sed -i 's/mentioned/named/' README", allow: true},
	{line: "tar -cf t.tar x && tar -tf t.tar", allow: true},
	{line: "git log --oneline -1 || true", allow: true, git: true, needs: []string{"git"}},
	{line: "kubectl exec ls -- rm -rf x"},
	{line: "apt-get install -y python3 bash make", allow: true, judged: true},
	{line: "docker build -t img .", allow: true, needs: []string{"docker"}},
	{line: "GIT_EDITOR=true git commit --allow-empty -q -m m", allow: true, git: true, needs: []string{"git"}},
	{line: "PAGER=cat git log -1 || true", allow: true, git: true, needs: []string{"git"}},
}

// TestSamplesGuard_DeniesEveryLineThatDeletesATreeRunByRealBash_RHK3:
// each line is run by bash in a scratch tree (x holds files two levels
// deep); every line that deletes any of x is denied by the samples' guard
// (config/samples/platform_extension_guard.yaml, read from the file), and
// the ordinary lines are allowed and delete nothing. A line whose program
// is missing is only judged.
func TestSamplesGuard_DeniesEveryLineThatDeletesATreeRunByRealBash_RHK3(t *testing.T) {
	if len(guardLines) < 60 {
		t.Fatalf("%d lines, want at least 60", len(guardLines))
	}
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Log("no bash: the lines are judged, not run")
	}
	for _, tc := range guardLines {
		v, err := h.Evaluate(context.Background(), shellCall(tc.line))
		switch {
		case tc.allow && (err != nil || !v.Allowed):
			t.Errorf("%q: %+v, %v; want allowed", tc.line, v, err)
		case !tc.allow && err == nil && v.Allowed:
			t.Errorf("%q: allowed; want denied", tc.line)
		}
		if bash == "" {
			continue
		}
		missing := slices.ContainsFunc(tc.needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil })
		if missing {
			t.Logf("%q: judged only (needs %v)", tc.line, tc.needs)
			continue
		}
		if (!tc.deletes && !tc.allow) || tc.judged {
			continue // denied, and not run here (sudo, docker, su…)
		}
		deleted := runInScratch(t, bash, tc)
		if deleted != tc.deletes {
			t.Errorf("%q run by bash: deleted part of the tree: %v, want %v", tc.line, deleted, tc.deletes)
		}
	}
}

// runInScratch runs line with bash in a new scratch tree and reports
// whether any file or directory of its tree x is gone.
func runInScratch(t *testing.T, bash string, tc guardLine) bool {
	t.Helper()
	files := map[string]string{}
	for _, f := range []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt", "docs/guide.md", "README", "build.log"} {
		files[f] = "rm -rf is mentioned here\n"
	}
	dir := resourcestest.Tree(t, files)
	if err := os.Mkdir(filepath.Join(dir, "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if tc.git {
		git := exec.Command("git", "init", "-q", ".")
		git.Dir, git.Env = dir, env
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	}
	before := tree(t, filepath.Join(dir, "x"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", tc.line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Errorf("%q: timed out", tc.line)
	}
	after := tree(t, filepath.Join(dir, "x"))
	gone := slices.ContainsFunc(before, func(p string) bool { return !slices.Contains(after, p) })
	if gone != tc.deletes {
		t.Logf("%q: bash said %v: %s", tc.line, err, strings.TrimSpace(string(out)))
	}
	return gone
}

// tree lists the paths under root.
func tree(t *testing.T, root string) []string {
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

// TestSamplesGuard_PowerShellIsReadAsPowerShellOrFailsClosed_RHK3: a line
// of Claude Code's PowerShell tool is read as PowerShell, never as bash:
// every recursive delete (Remove-Item -Recurse in any spelling or alias,
// a pipeline into Remove-Item, the native rm -r of pwsh on Linux) and
// everything the tokenizer cannot follow (.NET calls, iex of a variable,
// & $x, cmd.exe, encoded commands, scripts, aliases) is denied; ordinary
// cmdlets are allowed.
func TestSamplesGuard_PowerShellIsReadAsPowerShellOrFailsClosed_RHK3(t *testing.T) {
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	call := func(line string) Input {
		in := shellCall(line)
		in.Call.Name = "PowerShell"
		return in
	}
	for _, line := range []string{
		"Remove-Item -Recurse -Force x", "Remove-Item x -Recurse", "remove-item x -rec", "rm -r -fo x", "ri x -r", "del /s x",
		"rd x -Recurse", "erase -Recurse x", "Remove-Item -Path x -Recurse:$true", "Microsoft.PowerShell.Management\\Remove-Item x -Recurse",
		"Get-ChildItem x -Recurse | Remove-Item", "gci x -r | rm -Force", "gci x | % { Remove-Item $_ -Recurse }", "rm -rf x",
		"[IO.Directory]::Delete('x', $true)", "(Get-Item x).Delete($true)", "$d = Get-Item x; $d.Delete($true)", "gci x | % Delete",
		"iex 'Remove-Item -r x'", "Invoke-Expression $s", "iex (Get-Content s.ps1 -Raw)", "& $cmd x", "& (\"Remove\" + \"-Item\") x -Recurse",
		". ./script.ps1", "cmd /c rd /s /q x", "cmd.exe /c \"rd /s /q x\"", "pwsh -EncodedCommand abc", "powershell -enc abc",
		"pwsh -File s.ps1", "pwsh -c 'Remove-Item -Recurse x'", "Start-Process rm -ArgumentList '-rf x'", "Set-Alias ls Remove-Item",
		"New-Item -Path function:ls -Value { Remove-Item -r x }", "$p = @{Recurse=$true}; Remove-Item x @p",
		"Invoke-Command { Remove-Item x -Recurse }", "Invoke-Command -FilePath s.ps1", "Start-Job { Remove-Item -r x }",
		"bash -c 'rm -rf x'", "if ($true) { Remove-Item x -Recurse }", "foreach ($d in 'x') { Remove-Item $d -Recurse }",
		"Write-Output \"$(Remove-Item x -Recurse)\"", "Add-Type -TypeDefinition $src", "Import-Module ./evil.psm1",
		"python3 -c 'import shutil; shutil.rmtree(\"x\")'", "git clean -fdx", "find x -delete",
	} {
		if v, err := h.Evaluate(context.Background(), call(line)); err == nil && v.Allowed {
			t.Errorf("PowerShell %q: allowed; want denied", line)
		}
	}
	for _, line := range []string{
		"Get-ChildItem", "Get-ChildItem -Recurse docs", "Remove-Item build.log", "del build.log", "ls", "Get-Content README",
		"git status", "Write-Output 'rm -rf x'", "echo 'Remove-Item -Recurse x'", "Select-String -Pattern 'rm -rf' -Path docs",
		"$x = 1; Write-Host $x", "Get-ChildItem -Filter *.go | Measure-Object", "Test-Path x; if ($?) { Write-Host yes }",
		"# Remove-Item -Recurse x\nGet-Date", "Get-Process | Sort-Object CPU | Select-Object -First 5",
	} {
		if v, err := h.Evaluate(context.Background(), call(line)); err != nil || !v.Allowed {
			t.Errorf("PowerShell %q: %+v, %v; want allowed", line, v, err)
		}
	}
}
