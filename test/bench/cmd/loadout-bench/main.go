// Command loadout-bench runs the scale harness of docs/benchmarks.md: the
// manager in process against its own envtest control plane (propagation
// against a bare client, write economy, a storm, memory) and resolution
// against reading files and Pi's resource loader. `make bench` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/loadout-dev/loadout/test/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadout-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	home, _ := os.UserCacheDir()
	var (
		mode        = flag.String("mode", "full", "Preset: full (the table of docs/benchmarks.md) or smoke (seconds, small N). Other flags override it.")
		workspaces  = flag.String("workspaces", "", "Fleet sizes, ascending (full: 100,500,1000; smoke: 20).")
		resolution  = flag.String("resolution", "", "Skills per root for the resolution comparison (full: 1000,10000; smoke: 100). \"none\" skips it.")
		qps         = flag.Float64("qps", 50, "Client QPS of the manager and of the bare baseline client (cmd/manager's default).")
		burst       = flag.Int("burst", 100, "Client burst of both (cmd/manager's default).")
		concurrency = flag.Int("concurrency", 4, "MaxConcurrentReconciles, and the bare client's writers (cmd/manager's default).")
		namespaces  = flag.Int("namespaces", 20, "Project namespaces the fleet is spread over.")
		steady      = flag.Duration("steady", 0, "Steady-state window (full: 60s; smoke: 5s).")
		storm       = flag.Duration("storm", 0, "Storm duration (full: 30s; smoke: 3s).")
		stormRate   = flag.Int("storm-rate", 10, "Changes per second during the storm.")
		stormAt     = flag.Int("storm-at", 0, "Fleet size of the steady-state and storm phases (full: 500; smoke: the largest).")
		skills      = flag.Int("skills", -1, "Project Skills added at the largest fleet for the memory phase (full: 10000; smoke: 200); 0 skips.")
		iterations  = flag.Int("iterations", 0, "Timed iterations per resolution measurement (full: 5; smoke: 2).")
		piCache     = flag.String("pi-cache", filepath.Join(home, "loadout-bench", "pi"), "Directory npm installs Pi into; empty skips the Pi baseline.")
		piVersion   = flag.String("pi-version", "0.73.1", "Version of "+bench.PiPackage+" (empty: latest).")
		profileDir  = flag.String("profile-dir", "", "Write a heap profile of the memory phase here.")
		out         = flag.String("out", "", "Also write the Markdown tables to this file.")
		rounds      = flag.Int("rounds", 0, "Rounds of the change and the bare client at each fleet size, alternating which goes first; the ratio is their median (full: 3; smoke: 1).")
		timeout     = flag.Duration("timeout", 10*time.Minute, "Upper bound of each wait.")
		verbose     = flag.Bool("v", false, "Log the controllers at debug level.")
	)
	flag.Parse()

	cfg := bench.Config{
		Options:    bench.Options{QPS: float32(*qps), Burst: *burst, Concurrency: *concurrency, Verbose: *verbose},
		Namespaces: *namespaces, Isolated: 5, StormRate: *stormRate,
		PiCache: *piCache, PiVersion: *piVersion, ProfileDir: *profileDir, Timeout: *timeout,
	}
	ws, res := "100,500,1000", "1000,10000"
	switch *mode {
	case "full":
		cfg.Steady, cfg.Storm, cfg.StormAt, cfg.Skills, cfg.Iterations, cfg.Rounds = 60*time.Second, 30*time.Second, 500, 10000, 5, 3
	case "smoke":
		ws, res = "20", "100"
		cfg.Steady, cfg.Storm, cfg.StormAt, cfg.Skills, cfg.Iterations, cfg.Rounds = 5*time.Second, 3*time.Second, 20, 200, 2, 1
	default:
		return fmt.Errorf("-mode %q: want full or smoke", *mode)
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	if *workspaces != "" {
		ws = *workspaces
	}
	if *resolution != "" {
		res = *resolution
	}
	var err error
	if ws != "none" {
		if cfg.Workspaces, err = bench.ParseSizes(ws); err != nil {
			return err
		}
	}
	if res != "none" {
		if cfg.Resolution, err = bench.ParseSizes(res); err != nil {
			return err
		}
	}
	if *steady > 0 {
		cfg.Steady = *steady
	}
	if *storm > 0 {
		cfg.Storm = *storm
	}
	if *stormAt > 0 {
		cfg.StormAt = *stormAt
	} else if *mode == "smoke" && len(cfg.Workspaces) > 0 {
		cfg.StormAt = cfg.Workspaces[len(cfg.Workspaces)-1]
	}
	if *skills >= 0 {
		cfg.Skills = *skills
	}
	if *iterations > 0 {
		cfg.Iterations = *iterations
	}

	for _, d := range []string{*profileDir, filepath.Dir(*out)} {
		if d != "" && d != "." {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	}
	rep, err := bench.Run(context.Background(), cfg, os.Stderr)
	if rep != nil {
		rep.Markdown(os.Stdout)
		if *out != "" {
			fh, ferr := os.Create(*out)
			if ferr != nil {
				return ferr
			}
			rep.Markdown(fh)
			if cerr := fh.Close(); cerr != nil {
				return cerr
			}
		}
	}
	return err
}
