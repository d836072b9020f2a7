package bench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func platformGuard(expr string) *v1alpha1.Extension {
	e := testenv.Extension(PlatformNS, "bench-guard", nil, testenv.CELHook("no-destroy", vocab.BeforeToolCall, expr))
	e.Spec.DeniedTools = []v1alpha1.ToolName{"webfetch"}
	return e
}

// TestPolicyEpoch_WritesPerPlatformChange measures what the policy epoch
// costs in writes (docs/benchmarks.md, "Policy epoch"): a fleet of
// LOADOUT_BENCH_EPOCH_WORKSPACES Workspaces (default 1,000) over
// LOADOUT_BENCH_EPOCH_NAMESPACES namespaces (default 100), then platform
// changes (an imposed Extension added, then its hook changed) and a steady
// state of LOADOUT_BENCH_EPOCH_STEADY (default 60s). It runs only with
// LOADOUT_BENCH_EPOCH=1: it starts a control plane and takes minutes.
func TestPolicyEpoch_WritesPerPlatformChange(t *testing.T) {
	if os.Getenv("LOADOUT_BENCH_EPOCH") == "" {
		t.Skip("set LOADOUT_BENCH_EPOCH=1 to measure the policy epoch's writes")
	}
	intEnv := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return n
		}
		return def
	}
	workspaces, namespaces := intEnv("LOADOUT_BENCH_EPOCH_WORKSPACES", 1000), intEnv("LOADOUT_BENCH_EPOCH_NAMESPACES", 100)
	steady := time.Duration(intEnv("LOADOUT_BENCH_EPOCH_STEADY", 60)) * time.Second
	ctx := context.Background()
	e, err := Start(Options{QPS: 50, Burst: 100, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Stop() }()
	f, err := NewFleet(ctx, e, namespaces, 0)
	if err != nil {
		t.Fatal(err)
	}
	epochs := epochWrites()
	grow, err := f.Grow(ctx, workspaces, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initial convergence, %d Workspaces in %d namespaces: %s in %s; epoch writes %.0f", workspaces, namespaces, grow.Writes,
		grow.Duration.Round(time.Millisecond), epochWrites()-epochs)
	if n := int(epochWrites() - epochs); n != namespaces {
		t.Errorf("initial convergence: %d epoch writes, want one per namespace (%d)", n, namespaces)
	}

	change := func(name string, apply func() error) {
		t.Helper()
		keys := cmKeys(f.Workspaces)
		old := f.e.Tracker.Hashes(keys)
		before, ep, cpu := e.Writes.Snapshot(), epochWrites(), ReadCPU()
		start := time.Now()
		epochsDone := make(chan time.Time, 1)
		go func() {
			for epochWrites() < ep+float64(namespaces) && time.Since(start) < 10*time.Minute {
				time.Sleep(50 * time.Millisecond)
			}
			epochsDone <- time.Now()
		}()
		if err := apply(); err != nil {
			t.Fatal(err)
		}
		done, err := e.Tracker.WaitChanged(ctx, keys, old, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Settle(ctx, 3*time.Second, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		w := e.Writes.Snapshot().Since(before)
		by := w.ByVerb()
		nEpoch := int(epochWrites() - ep)
		t.Logf("%s: every epoch in %s, every context in %s; writes %s; epoch applies %d, context patches %d; cpu %s",
			name, (<-epochsDone).Sub(start).Round(time.Millisecond), done.Sub(start).Round(time.Millisecond), w, nEpoch, by["patch configmaps"],
			cpuString(ReadCPU().Sub(cpu)))
		if nEpoch != namespaces {
			t.Errorf("%s: %d epoch writes, want one per namespace (%d)", name, nEpoch, namespaces)
		}
		if n := by["patch configmaps"]; n != workspaces {
			t.Errorf("%s: %d context patches, want one per Workspace (%d)", name, n, workspaces)
		}
	}
	change("platform change 1 (an imposed Extension added)", func() error {
		return e.Client.Create(ctx, platformGuard("!call.arguments.command.startsWith('terraform destroy')"))
	})
	change("platform change 2 (its hook changed)", func() error {
		g := platformGuard("")
		if err := e.Client.Get(ctx, keyOf(g), g); err != nil {
			return err
		}
		g.Spec.Hooks[0].CEL.Expression = "!call.arguments.command.startsWith('terraform')"
		return e.Client.Update(ctx, g)
	})
	ep := epochWrites()
	rest := f.Steady(ctx, steady)
	t.Logf("at rest, %s: writes %s (total %d); epoch writes %.0f", steady, rest.Writes, rest.Writes.Total(), epochWrites()-ep)
	if rest.Writes.Total() != 0 || epochWrites() != ep {
		t.Errorf("at rest: %d writes, want none", rest.Writes.Total())
	}
}

// epochWrites is loadout_policy_epoch_writes_total (the epoch ConfigMaps
// written) of the manager in this process.
func epochWrites() float64 { return testenv.Metric("loadout_policy_epoch_writes_total") }
