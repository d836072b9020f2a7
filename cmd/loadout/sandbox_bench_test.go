package main

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestSandboxCost_Interleaved measures what `loadout sandbox` adds to one
// command: `true` run plainly, through `loadout sandbox` on a context that
// declares no sandbox (the CLI's start and the context's load, no
// Landlock), on one that declares one, and on one that also names hosts
// (the egress proxy started beside the command), in turn, 300 runs each, medians
// and 95th percentiles (docs/benchmarks.md). It runs only with LOADOUT_BENCH_SANDBOX=1; the CLI
// is $LOADOUT_BIN when set (make build), else this test binary.
func TestSandboxCost_Interleaved(t *testing.T) {
	if os.Getenv("LOADOUT_BENCH_SANDBOX") != "1" {
		t.Skip("a measurement, not a test: LOADOUT_BENCH_SANDBOX=1 runs it")
	}
	ctx := sandboxContext(t, t.TempDir())
	withHosts := sandboxContextWith(t, t.TempDir(), `{connectPorts: [], hosts: ["github.com"]}`)
	bare := t.TempDir()
	for k, v := range previewData(t, "-f", "../../config/samples") {
		if err := os.WriteFile(bare+"/"+k, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	sandboxed := func(from string) *exec.Cmd {
		if bin := os.Getenv("LOADOUT_BIN"); bin != "" {
			return exec.Command(bin, "sandbox", "--from", from, "--", truePath)
		}
		return loadoutCmd(t, "sandbox", "--from", from, "--", truePath)
	}
	const runs = 300
	var plain, cli, boxed, proxied []time.Duration
	timeIt := func(cmd *exec.Cmd) time.Duration {
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		return time.Since(start)
	}
	for range runs {
		plain = append(plain, timeIt(exec.Command(truePath)))
		cli = append(cli, timeIt(sandboxed(bare)))
		boxed = append(boxed, timeIt(sandboxed(ctx)))
		proxied = append(proxied, timeIt(sandboxed(withHosts)))
	}
	stat := func(d []time.Duration) (time.Duration, time.Duration) {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2], s[len(s)*95/100]
	}
	pm, p95 := stat(plain)
	cm, c95 := stat(cli)
	bm, b95 := stat(boxed)
	hm, h95 := stat(proxied)
	t.Logf("plain exec of true: median %v, p95 %v", pm, p95)
	t.Logf("loadout sandbox -- true, no sandbox declared: median %v, p95 %v", cm, c95)
	t.Logf("loadout sandbox -- true, sandbox declared (Landlock): median %v, p95 %v (adds %v at the median; Landlock itself %v)", bm, b95, bm-pm, bm-cm)
	t.Logf("loadout sandbox -- true, sandbox with hosts (egress proxy): median %v, p95 %v (the proxy's start adds %v)", hm, h95, hm-bm)
}
