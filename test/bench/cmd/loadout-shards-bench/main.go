// Command loadout-shards-bench runs the shard harness of docs/benchmarks.md:
// N = 1 and N = 3 manager processes (this binary re-run with -child)
// against one envtest control plane per mode, server (ShardedListAndWatch
// on) and client (off). `make bench-shards` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/test/bench"
	"github.com/loadout-dev/loadout/test/shards"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadout-shards-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		isChild    = flag.Bool("child", false, "Run one manager process (the harness starts these).")
		kubeconfig = flag.String("child-kubeconfig", "", "child: kubeconfig of the control plane.")
		plan       = flag.String("plan", "", "child: shard plan file.")
		shardName  = flag.String("shard", "", "child: shard to run.")
		selector   = flag.String("selector", "auto", "child: auto, server or client.")
		qps        = flag.Float64("qps", 50, "Client QPS of each manager process (cmd/manager's default).")
		burst      = flag.Int("burst", 100, "Client burst of each manager process.")
		workers    = flag.Int("workers", 4, "MaxConcurrentReconciles of each manager process.")
		modes      = flag.String("modes", "server,client", "Modes to run.")
		workspaces = flag.Int("workspaces", 8000, "Workspaces of the main fleet.")
		namespaces = flag.Int("namespaces", 2000, "Namespaces of the main fleet.")
		whale      = flag.Int("whale", 4000, "Workspaces in the whale namespace; 0 skips the whale phase.")
		small      = flag.Int("small", 50, "Small tenants changed during the whale's drain.")
		n          = flag.Int("shards", 3, "Shards of the N > 1 run.")
		steady     = flag.Duration("steady", 10*time.Second, "Window at rest, and after a takeover.")
		timeout    = flag.Duration("timeout", 20*time.Minute, "Upper bound of each wait.")
		out        = flag.String("out", "", "Also write the Markdown to this file.")
	)
	flag.Parse()
	if *isChild {
		return shards.RunChild(*kubeconfig, *plan, *shardName, shard.Mode(*selector), float32(*qps), *burst, *workers)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := bench.ShardConfig{
		Modes: strings.Split(*modes, ","), Workspaces: *workspaces, Namespaces: *namespaces, Whale: *whale, Small: *small,
		Shards: *n, QPS: float32(*qps), Burst: *burst, Workers: *workers, Steady: *steady, Timeout: *timeout, Self: self, Log: os.Stderr,
	}
	runs, err := bench.RunShards(context.Background(), cfg)
	md := bench.ShardMarkdown(cfg, runs)
	fmt.Print(md)
	if *out != "" {
		if werr := os.WriteFile(*out, []byte(md), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}
