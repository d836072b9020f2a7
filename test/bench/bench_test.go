package bench

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// TestHarness_SmokeConvergesPropagatesAndCoalesces runs the harness at a tiny
// scale (20 Workspaces, short steady state and storm, 100 skills, no Pi) so
// `make test` keeps it working. It asserts correctness only, never timing:
// every ConfigMap takes the change, one change is one apply and at most one
// status patch per affected Workspace, unaffected Workspaces and steady state
// get no writes, and the storm's final state is right.
func TestHarness_SmokeConvergesPropagatesAndCoalesces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	cfg := Config{
		Options:    Options{QPS: 50, Burst: 100, Concurrency: 4},
		Workspaces: []int{20}, Namespaces: 4, Isolated: 2,
		Steady: 3 * time.Second, StormAt: 20, StormRate: 10, Storm: 2 * time.Second,
		Skills: 40, Resolution: []int{20}, Iterations: 1,
		Timeout: 2 * time.Minute, Rounds: 2,
	}
	rep, err := Run(context.Background(), cfg, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Propagation) != 1 {
		t.Fatalf("propagation rows = %d, want 1", len(rep.Propagation))
	}
	if row := rep.Propagation[0]; len(row.Ratios) != 2 || row.RatioOfRates != median(row.Ratios) || row.RatioOfRates <= 0 {
		t.Errorf("two rounds: ratios %v, reported %v, want both rounds and their median", row.Ratios, row.RatioOfRates)
	}
	ch := rep.Propagation[0].Change
	by := ch.Writes.ByVerb()
	if by["patch configmaps"] != ch.N {
		t.Errorf("one change: %d ConfigMap patches for %d affected Workspaces, want one each (%s)", by["patch configmaps"], ch.N, ch.Writes)
	}
	if by["patch workspaces/status"] > ch.N {
		t.Errorf("one change: %d status patches for %d affected Workspaces, want at most one each", by["patch workspaces/status"], ch.N)
	}
	if ch.Unaffected != 0 {
		t.Errorf("one change: %d writes for unaffected Workspaces", ch.Unaffected)
	}
	if rep.Steady == nil || rep.Steady.Writes.Total() != 0 {
		t.Errorf("steady state wrote: %v", rep.Steady)
	}
	if rep.Storm == nil || len(rep.Storm.Problems) > 0 {
		t.Errorf("storm final state: %+v", rep.Storm)
	}
	if rep.Memory == nil || rep.Memory.Skills == 0 || rep.Memory.HeapInuse == 0 {
		t.Errorf("memory: %+v", rep.Memory)
	}
	if len(rep.Resolution) != 1 || rep.Resolution[0].Winners != 20 {
		t.Errorf("resolution: %+v", rep.Resolution)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func TestMedian_OddAndEvenRounds(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{0.9}, 0.9}, {[]float64{1.1, 0.7, 0.8}, 0.8}, {[]float64{0.6, 1.0, 0.8, 0.9}, 0.85}} {
		in := slices.Clone(c.in)
		if got := median(in); math.Abs(got-c.want) > 1e-9 || !slices.Equal(in, c.in) {
			t.Errorf("median(%v) = %v (input now %v), want %v and the input unchanged", c.in, got, in, c.want)
		}
	}
}
