package exthost

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
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

// TestSamplesGuard_DeniesEveryLineThatDeletesATreeRunByRealBash_RHK3:
// each line is run by bash in a scratch tree (x holds files two levels
// deep); every line that deletes any of x is denied by the samples' guard
// (config/samples/platform_extension_guard.yaml, read from the file), and
// the ordinary lines are allowed and delete nothing. A line whose program
// is missing is only judged.
func TestSamplesGuard_DeniesEveryLineThatDeletesATreeRunByRealBash_RHK3(t *testing.T) {
	if len(shellcorpus.Guard) < 60 {
		t.Fatalf("%d lines, want at least 60", len(shellcorpus.Guard))
	}
	h := mustCEL(t, vocab.BeforeToolCall, samplesGuard(t))
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Log("no bash: the lines are judged, not run")
	}
	for _, tc := range shellcorpus.Guard {
		v, err := h.Evaluate(context.Background(), shellCall(tc.Line))
		switch {
		case tc.Allow && (err != nil || !v.Allowed):
			t.Errorf("%q: %+v, %v; want allowed", tc.Line, v, err)
		case !tc.Allow && err == nil && v.Allowed:
			t.Errorf("%q: allowed; want denied", tc.Line)
		}
		if bash == "" {
			continue
		}
		missing := slices.ContainsFunc(tc.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil })
		if missing {
			t.Logf("%q: judged only (needs %v)", tc.Line, tc.Needs)
			continue
		}
		if (!tc.Deletes && !tc.Allow) || tc.Judged {
			continue // denied, and not run here (sudo, docker, su…)
		}
		deleted := shellcorpus.RunInScratch(t, bash, tc, nil)
		if deleted != tc.Deletes {
			t.Errorf("%q run by bash: deleted part of the tree: %v, want %v", tc.Line, deleted, tc.Deletes)
		}
	}
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
