package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Config is one harness run.
type Config struct {
	Options
	Workspaces []int // fleet sizes, ascending; propagation is measured at each
	Namespaces int
	Isolated   int
	Steady     time.Duration
	// StormAt is the fleet size at which steady state and the storm run.
	StormAt    int
	StormRate  int
	Storm      time.Duration
	Skills     int // memory phase: project Skills added at the largest fleet; 0 skips
	Resolution []int
	Iterations int
	// PiCache is where npm installs Pi; empty skips the Pi baseline.
	PiCache    string
	PiVersion  string
	ProfileDir string
	Timeout    time.Duration
	// Rounds is how many times the controller's change and the bare client
	// are timed at each fleet size, alternating which goes first; the ratio
	// reported is the median of the rounds' ratios. One round on a shared
	// two-core machine scatters too widely to compare (docs/benchmarks.md).
	Rounds int
}

// Report is everything measured.
type Report struct {
	Config      Config
	Load        []string // load averages at phase boundaries
	Propagation []PropagationRow
	Convergence []*Phase
	Steady      *Phase
	Storm       *StormResult
	AddSkills   *Phase
	Memory      *MemoryResult
	Resolution  []*ResolutionResult
	PiErr       error
}

// PropagationRow is one fleet size: the controller against the bare client.
type PropagationRow struct {
	N                 int
	Change, Baseline  *Phase
	RatioOfRates      float64 // baseline time / controller time; the median of Ratios
	Ratios            []float64
	ControllerPerSec  float64
	BaselinePerSecond float64
}

// Run runs the configured phases, printing progress to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	rep := &Report{Config: cfg}
	mark := func(what string) {
		l := loadavg()
		rep.Load = append(rep.Load, what+": "+l)
		fmt.Fprintf(log, "# %s (load average %s)\n", what, l)
	}
	if len(cfg.Workspaces) > 0 {
		if err := runCluster(ctx, cfg, rep, log, mark); err != nil {
			return rep, err
		}
	}
	if len(cfg.Resolution) > 0 {
		mark("resolution")
		base, err := os.MkdirTemp("", "loadout-bench-tree-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(base)
		piDir := ""
		if cfg.PiCache != "" {
			if piDir, err = InstallPi(cfg.PiCache, cfg.PiVersion); err != nil {
				rep.PiErr = err
				fmt.Fprintln(log, "Pi baseline unavailable:", err)
			}
		}
		for _, n := range cfg.Resolution {
			r, err := Resolution(base, n, cfg.Iterations, piDir)
			if err != nil {
				return rep, err
			}
			rep.Resolution = append(rep.Resolution, r)
			fmt.Fprintf(log, "resolution %d×3: loadout %s, read %s, pi %+v %v\n", n, r.Loadout, r.Read, r.Pi, r.PiErr)
		}
	}
	mark("done")
	return rep, nil
}

func runCluster(ctx context.Context, cfg Config, rep *Report, log io.Writer, mark func(string)) error {
	mark("starting envtest and the manager")
	e, err := Start(cfg.Options)
	if err != nil {
		return err
	}
	defer func() { _ = e.Stop() }()
	fmt.Fprintf(log, "manager client: QPS %.0f, burst %d, MaxConcurrentReconciles %d; bare client: same QPS, burst and %d writers\n",
		cfg.QPS, cfg.Burst, cfg.Concurrency, cfg.Concurrency)
	f, err := NewFleet(ctx, e, cfg.Namespaces, cfg.Isolated)
	if err != nil {
		return err
	}
	for _, n := range cfg.Workspaces {
		mark(fmt.Sprintf("grow to %d Workspaces", n))
		conv, err := f.Grow(ctx, n, cfg.Timeout)
		if err != nil {
			return fmt.Errorf("growing to %d: %w", n, err)
		}
		rep.Convergence = append(rep.Convergence, conv)
		fmt.Fprintf(log, "converged %d new Workspaces in %s: %s\n", conv.N, conv.Duration.Round(time.Millisecond), conv.Writes)

		mark(fmt.Sprintf("propagation at %d", n))
		// The manager's profile is split where the timed part ends:
		// cpu-change-N is the change until every ConfigMap is out,
		// cpu-settle-N what follows until the manager is idle.
		stop := cpuProfile(cfg.ProfileDir, fmt.Sprintf("cpu-change-%d.pprof", n))
		stopServer := apiserverProfile(ctx, e.Cfg, cfg.ProfileDir, fmt.Sprintf("apiserver-cpu-change-%d.pprof", n))
		ch, err := f.Change(ctx, cfg.Timeout, func() {
			stop()
			stop = cpuProfile(cfg.ProfileDir, fmt.Sprintf("cpu-settle-%d.pprof", n))
		})
		stop()
		stopServer()
		if err != nil {
			return fmt.Errorf("change at %d: %w", n, err)
		}
		bl, err := f.Baseline(ctx, n, cfg.Timeout)
		if err != nil {
			return fmt.Errorf("baseline at %d: %w", n, err)
		}
		ratios, err := moreRounds(ctx, f, n, cfg, ratio(bl, ch))
		if err != nil {
			return err
		}
		row := PropagationRow{N: n, Change: ch, Baseline: bl,
			RatioOfRates:      median(ratios),
			Ratios:            ratios,
			ControllerPerSec:  float64(n) / ch.Duration.Seconds(),
			BaselinePerSecond: float64(n) / bl.Duration.Seconds()}
		rep.Propagation = append(rep.Propagation, row)
		fmt.Fprintf(log, "propagation %d: controller %s (%.0f/s, cpu %s), bare client %s (%.0f/s, cpu %s), ratio %.2f (rounds %s); writes %s; unaffected %d; reconciles %d\n",
			n, ch.Duration.Round(time.Millisecond), row.ControllerPerSec, cpuString(ch.CPU), bl.Duration.Round(time.Millisecond), row.BaselinePerSecond,
			cpuString(bl.CPU), row.RatioOfRates, ratiosString(ratios), ch.Writes, ch.Unaffected, ch.Reconciles)

		if n == cfg.StormAt {
			if cfg.Steady > 0 {
				mark(fmt.Sprintf("steady state at %d", n))
				rep.Steady = f.Steady(ctx, cfg.Steady)
				fmt.Fprintf(log, "steady %s: writes %s\n", cfg.Steady, rep.Steady.Writes)
			}
			if cfg.Storm > 0 {
				mark(fmt.Sprintf("storm at %d", n))
				if rep.Storm, err = f.Storm(ctx, cfg.StormRate, cfg.Storm, cfg.Timeout); err != nil {
					return err
				}
				fmt.Fprintf(log, "storm: %d changes, settled %s after the last, writes %s, reconciles %d, problems %v\n",
					rep.Storm.Changes, rep.Storm.Settle.Round(time.Millisecond), rep.Storm.Writes, rep.Storm.Reconciles, rep.Storm.Problems)
			}
		}
	}
	if cfg.Skills > 0 {
		mark(fmt.Sprintf("adding %d skills", cfg.Skills))
		if rep.AddSkills, err = f.AddSkills(ctx, cfg.Skills, 3*cfg.Timeout); err != nil {
			return err
		}
		fmt.Fprintf(log, "added skills in %s: writes %s\n", rep.AddSkills.Duration.Round(time.Millisecond), rep.AddSkills.Writes)
		mark("memory")
		profile := ""
		if cfg.ProfileDir != "" {
			profile = filepath.Join(cfg.ProfileDir, "heap.pprof")
		}
		if rep.Memory, err = Memory(ctx, e, profile); err != nil {
			return err
		}
		fmt.Fprintf(log, "memory: %+v\n", *rep.Memory)
	}
	return nil
}

// cpuProfile profiles the process (manager included) into dir/name until
// the returned function is called, and writes the allocation profile at both
// ends (allocs-before-NAME, allocs-after-NAME: read the span with pprof
// -base); it does nothing when dir is empty.
func cpuProfile(dir, name string) func() {
	if dir == "" {
		return func() {}
	}
	fh, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		_ = fh.Close()
		return func() {}
	}
	allocs(dir, "allocs-before-"+name)
	return func() {
		pprof.StopCPUProfile()
		_ = fh.Close()
		allocs(dir, "allocs-after-"+name)
	}
}

// apiserverProfile profiles the API server (its /debug/pprof endpoint,
// read with the admin config) into dir/name for the first five seconds from
// now; the returned function waits for the profile. It does nothing when dir
// is empty. The server's CPU is most of a propagation's cost, so this is
// where to look.
func apiserverProfile(ctx context.Context, cfg *rest.Config, dir, name string) func() {
	if dir == "" {
		return func() {}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The server answers only after the whole duration (a cancelled
		// request gets nothing), so the duration is fixed up front.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/debug/pprof/profile?seconds=5", nil)
		if err != nil {
			return
		}
		resp, err := hc.Do(req)
		if err != nil {
			return
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "API server profile %s: %s\n", req.URL, resp.Status)
			return
		}
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return
		}
		defer func() { _ = fh.Close() }()
		_, _ = io.Copy(fh, resp.Body)
	}()
	return func() { <-done }
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Markdown writes the report as the tables of docs/benchmarks.md.
func (r *Report) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "Machine: %d CPUs (GOMAXPROCS %d), %s/%s, %s. Load average: %s.\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(r.Load, "; "))
	if len(r.Propagation) > 0 {
		fmt.Fprintf(w, "Client rate limit (manager and bare client): QPS %.0f, burst %d; concurrency %d (MaxConcurrentReconciles and bare writers); %d namespaces, %d isolated Workspaces.\n\n",
			c.QPS, c.Burst, c.Concurrency, c.Namespaces, c.Isolated)
		fmt.Fprintln(w, "| Workspaces | controller: change → every ConfigMap | bare client: N applies | ratio of rates (median; each round) | CPU controller run (harness process / apiserver+etcd) | CPU bare run | writes for the change | per affected Workspace | unaffected |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---|---|---:|")
		for _, p := range r.Propagation {
			fmt.Fprintf(w, "| %d | %s (%.0f/s) | %s (%.0f/s) | %.2f (%s) | %s | %s | %s | %s | %d |\n", p.N,
				p.Change.Duration.Round(time.Millisecond), p.ControllerPerSec, p.Baseline.Duration.Round(time.Millisecond), p.BaselinePerSecond,
				p.RatioOfRates, ratiosString(p.Ratios), cpuString(p.Change.CPU), cpuString(p.Baseline.CPU), p.Change.Writes, perAffected(p.Change), p.Change.Unaffected)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| step | Workspaces | time | writes (manager, by verb) | per Workspace | reconciles |")
		fmt.Fprintln(w, "|---|---:|---:|---|---|---:|")
		for _, p := range r.Convergence {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | – |\n", p.Name, p.N, p.Duration.Round(time.Millisecond), p.Writes, perAffected(p))
		}
		for _, p := range r.Propagation {
			fmt.Fprintf(w, "| one change | %d | %s | %s | %s | %d |\n", p.N, p.Change.Duration.Round(time.Millisecond), p.Change.Writes, perAffected(p.Change), p.Change.Reconciles)
		}
		if s := r.Steady; s != nil {
			fmt.Fprintf(w, "| steady state %s | %d | – | %s | – | – |\n", s.Duration, c.StormAt, s.Writes)
		}
		if a := r.AddSkills; a != nil {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | – |\n", a.Name, a.N, a.Duration.Round(time.Millisecond), a.Writes, perAffected(a))
		}
		fmt.Fprintln(w)
	}
	if s := r.Storm; s != nil {
		patches := s.Writes.ByVerb()["patch configmaps"]
		fmt.Fprintf(w, "Storm at %d Workspaces: %d changes in %s (%d/s); every ConfigMap carried the last revision %s after the last change.\n",
			s.N, s.Changes, s.Duration, c.StormRate, s.Settle.Round(time.Millisecond))
		fmt.Fprintf(w, "Writes: %s. ConfigMap patches %d = %.2f per Workspace for %d changes (%.1f%% of one patch per Workspace per change). Unaffected writes: %d. Final state: %s.\n\n",
			s.Writes, patches, float64(patches)/float64(s.N), s.Changes, 100*float64(patches)/float64(s.N*s.Changes), s.Unaffected, problems(s.Problems))
	}
	if m := r.Memory; m != nil {
		fmt.Fprintln(w, "| Workspaces | Skills | ConfigMaps | cached objects (JSON) | cached metadata (JSON) | heap in use after GC | heap / cached | RSS (peak) |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
		fmt.Fprintf(w, "| %d | %d | %d | %s | %s | %s | %.1f× | %s (%s) |\n\n", m.Workspaces, m.Skills, m.ConfigMaps,
			mib(m.CachedBytes), mib(m.MetadataBytes), mib(int64(m.HeapInuse)), float64(m.HeapInuse)/float64(m.CachedBytes+m.MetadataBytes), mib(m.RSS), mib(m.PeakRSS))
	}
	if len(r.Resolution) > 0 {
		// Pi / read only bounds what any loader that reads the files can
		// achieve against Pi: reading is the floor.
		fmt.Fprintln(w, "| skills × 3 roots | Loadout resolve + render (median) | read only (median) | Loadout / read | Pi DefaultResourceLoader warm median (cold) | Pi warm / Loadout | Pi cold / Loadout | Pi warm / read only |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, x := range r.Resolution {
			pi, warm, cold, floor := "–", "–", "–", "–"
			if x.Pi != nil {
				pi = fmt.Sprintf("%.1f ms (%.1f ms)", x.Pi.WarmMedianMs, x.Pi.ColdMs)
				warm = fmt.Sprintf("%.1f×", x.Pi.WarmMedianMs/ms(x.Loadout))
				cold = fmt.Sprintf("%.1f×", x.Pi.ColdMs/ms(x.Loadout))
				floor = fmt.Sprintf("%.1f×", x.Pi.WarmMedianMs/ms(x.Read))
			} else if x.PiErr != nil {
				pi = "error: " + x.PiErr.Error()
			}
			fmt.Fprintf(w, "| %d | %.1f ms | %.1f ms | %.1f× | %s | %s | %s | %s |\n", x.Skills, ms(x.Loadout), ms(x.Read), ms(x.Loadout)/ms(x.Read), pi, warm, cold, floor)
		}
		if r.PiErr != nil {
			fmt.Fprintf(w, "\nPi baseline unavailable: %v\n", r.PiErr)
		}
		fmt.Fprintln(w)
	}
}

func perAffected(p *Phase) string {
	if p.N == 0 {
		return "–"
	}
	by := p.Writes.ByVerb()
	// A new ConfigMap is created, an existing one patched: one write either way.
	writes := by["create configmaps"] + by["patch configmaps"]
	return fmt.Sprintf("%.2f ConfigMap write, %.2f status patch", float64(writes)/float64(p.N), float64(by["patch workspaces/status"])/float64(p.N))
}

func problems(p []string) string {
	if len(p) == 0 {
		return "right"
	}
	return strings.Join(p, "; ")
}

func cpuString(c CPUTimes) string {
	return fmt.Sprintf("%.2fs / %.2fs", c.Self.Seconds(), c.Server.Seconds())
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ParseSizes parses "100,500,1000".
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n <= 0 {
			return nil, fmt.Errorf("size %q: want a positive integer", f)
		}
		out = append(out, n)
	}
	if !slices.IsSorted(out) {
		return nil, errors.New("sizes must be ascending")
	}
	return out, nil
}

// ratio is the bare client's time over the controller's: the controller's
// propagation rate as a share of the bare client's.
func ratio(bare, controller *Phase) float64 {
	return bare.Duration.Seconds() / controller.Duration.Seconds()
}

// moreRounds times cfg.Rounds-1 more pairs of a change and the bare client
// at n, the bare client first in every other pair, so that a drift in the
// machine's load favours neither. It returns first followed by each pair's
// ratio.
func moreRounds(ctx context.Context, f *Fleet, n int, cfg Config, first float64) ([]float64, error) {
	ratios := []float64{first}
	for round := 1; round < cfg.Rounds; round++ {
		var ch, bl *Phase
		var err error
		timeChange := func() error {
			ch, err = f.Change(ctx, cfg.Timeout, nil)
			return err
		}
		timeBare := func() error {
			bl, err = f.Baseline(ctx, n, cfg.Timeout)
			return err
		}
		steps := []func() error{timeChange, timeBare}
		if round%2 == 1 {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, fmt.Errorf("round %d at %d: %w", round+1, n, err)
			}
		}
		ratios = append(ratios, ratio(bl, ch))
	}
	return ratios, nil
}

// median of xs (not empty); xs is left in its order.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratiosString(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}

// allocs writes the process's allocation profile so far into dir/name.
func allocs(dir, name string) {
	fh, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return
	}
	defer fh.Close()
	_ = pprof.Lookup("allocs").WriteTo(fh, 0)
}
