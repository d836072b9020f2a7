package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/test/shards"
)

// ShardConfig is one run of the shard harness: N = 1 and N = Shards manager
// processes against one envtest control plane per mode.
type ShardConfig struct {
	// Modes: "server" (ShardedListAndWatch on, selectors where offered) and
	// "client" (gate off, client-side filter only).
	Modes      []string
	Workspaces int // the main fleet
	Namespaces int
	Whale      int // Workspaces in the whale namespace; 0 skips the whale phase
	Small      int // small tenants measured during the whale's drain
	Shards     int
	QPS        float32
	Burst      int
	Workers    int
	Steady     time.Duration
	Timeout    time.Duration
	// Self is the harness binary, re-run with -child for each manager.
	Self string
	Log  io.Writer
}

// ShardRun is what one mode measured.
type ShardRun struct {
	Mode        string
	Selector    []string // kinds the API server sharded (probe)
	Converge    time.Duration
	Rows        []ShardRow // N = 1, then N = Shards
	Whale       *WhaleResult
	Failover    *FailoverResult
	TakeoverRef string
}

// ShardRow is one N.
type ShardRow struct {
	N              int
	Processes      []ProcRow
	ChangeTime     time.Duration
	Affected       int
	Applies        int // Σ ConfigMap writes for the change
	StatusPatches  int // Σ status patches for the change
	RestWrites     int // Σ writes in the steady window
	TakeoverWrites int // Σ writes while taking over a published fleet (N>1: after N=1 stopped)
	Owned, Overlap int
	Uncovered      float64
}

// ProcRow is one process.
type ProcRow struct {
	Shard                  string
	Owned                  int
	HeapAfterGC            uint64
	ChangeCM, ChangeStatus int
	RestWrites             int
	TakeoverW              int
}

// WhaleResult: small tenants' changes while the whale drains.
type WhaleResult struct {
	N            int
	WhaleDrain   time.Duration
	Samples      int
	P50, P99, Mx time.Duration
}

// FailoverResult: a leader killed with a warm standby.
type FailoverResult struct {
	Slice         int
	Current       time.Duration // kill to the slice all current
	StandbyWrites int
	LeaseDuration time.Duration
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
	shard string
}

func (c *child) stats(ctx context.Context, gc bool) (*shards.Stats, error) {
	url := "http://" + c.addr + "/stats"
	if gc {
		url += "?gc=1"
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var s shards.Stats
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("stats: %s", b)
	}
	return &s, json.NewDecoder(resp.Body).Decode(&s)
}

func (c *child) stop() {
	_ = c.stdin.Close()
	testenv.WaitOrKill(c.cmd, 30*time.Second)
}

func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

// RunShards runs every mode of cfg.
func RunShards(ctx context.Context, cfg ShardConfig) ([]*ShardRun, error) {
	var out []*ShardRun
	for _, mode := range cfg.Modes {
		r, err := runShardMode(ctx, cfg, mode)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			return out, fmt.Errorf("mode %s: %w", mode, err)
		}
	}
	return out, nil
}

func logf(cfg ShardConfig, format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

func runShardMode(ctx context.Context, cfg ShardConfig, mode string) (*ShardRun, error) {
	var opts []func(*envtest.Environment)
	if mode == "server" {
		opts = append(opts, shards.GateOn)
	}
	env, rc, err := testenv.Start(opts...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.Stop() }()
	dir, err := os.MkdirTemp("", "shards-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(rc, kubeconfig); err != nil {
		return nil, err
	}
	admin := rest.CopyConfig(rc)
	admin.QPS, admin.Burst = 2000, 4000
	c, err := client.New(admin, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		return nil, err
	}
	tracker, err := startTracker(ctx, admin)
	if err != nil {
		return nil, err
	}
	run := &ShardRun{Mode: mode}

	// The fleets.
	weights := map[string]int{}
	var cms []string // every context ConfigMap, "ns/name-context"
	var nsNames []string
	for i := range cfg.Namespaces {
		nsNames = append(nsNames, fmt.Sprintf("tenant-%04d", i))
	}
	if cfg.Whale > 0 {
		nsNames = append(nsNames, "whale")
		for i := range cfg.Small {
			nsNames = append(nsNames, fmt.Sprintf("small-%03d", i))
		}
	}
	platform := namespace(PlatformNS)
	platform.Labels = map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}
	if err := c.Create(ctx, platform); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, sharedSkill(0)); err != nil {
		return nil, err
	}
	logf(cfg, "%s: creating %d namespaces", mode, len(nsNames))
	if err := parallel(ctx, 16, len(nsNames), func(ctx context.Context, i int) error {
		ns := namespace(nsNames[i])
		if err := c.Create(ctx, ns); err != nil {
			return err
		}
		if strings.HasPrefix(nsNames[i], "whale") || strings.HasPrefix(nsNames[i], "small-") {
			return c.Create(ctx, projectSkill(nsNames[i], "project", 0))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	type wsKey struct{ ns, name string }
	var all []wsKey
	for i := range cfg.Workspaces {
		all = append(all, wsKey{nsNames[i%cfg.Namespaces], fmt.Sprintf("ws-%05d", i)})
	}
	var whaleCMs, smallCMs []string
	if cfg.Whale > 0 {
		for i := range cfg.Whale {
			all = append(all, wsKey{"whale", fmt.Sprintf("ws-%05d", i)})
			whaleCMs = append(whaleCMs, fmt.Sprintf("whale/ws-%05d-context", i))
		}
		for i := range cfg.Small {
			ns := fmt.Sprintf("small-%03d", i)
			all = append(all, wsKey{ns, "ws-00000"})
			smallCMs = append(smallCMs, ns+"/ws-00000-context")
		}
	}
	for _, k := range all {
		weights[k.ns]++
		cms = append(cms, k.ns+"/"+k.name+"-context")
	}
	logf(cfg, "%s: creating %d Workspaces", mode, len(all))
	if err := parallel(ctx, 32, len(all), func(ctx context.Context, i int) error {
		return c.Create(ctx, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: all[i].ns, Name: all[i].name}})
	}); err != nil {
		return nil, err
	}

	plans := map[int]*shard.Plan{1: shard.EvenPlan(1), cfg.Shards: shard.WeightedPlan(weights, cfg.Shards)}
	planFile := func(n int) (string, error) {
		f := filepath.Join(dir, fmt.Sprintf("plan-%d.yaml", n))
		return f, os.WriteFile(f, plans[n].YAML(), 0o600)
	}
	start := func(n int, shardName string) (*child, error) {
		pf, err := planFile(n)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, cfg.Self, "-child", "-child-kubeconfig", kubeconfig, "-plan", pf, "-shard", shardName,
			"-selector", map[string]string{"server": "auto", "client": "client"}[mode],
			"-qps", fmt.Sprint(cfg.QPS), "-burst", fmt.Sprint(cfg.Burst), "-workers", fmt.Sprint(cfg.Workers))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("child %s: %w", shardName, err)
		}
		return &child{cmd: cmd, stdin: stdin, addr: strings.TrimSpace(line), shard: shardName}, nil
	}
	waitLeading := func(cs []*child) error {
		deadline := time.Now().Add(cfg.Timeout)
		for _, ch := range cs {
			for {
				s, err := ch.stats(ctx, false)
				if err == nil && s.Leading {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("shard %s never led: %w", ch.shard, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		return nil
	}
	sum := func(cs []*child, gc bool) ([]*shards.Stats, error) {
		var out []*shards.Stats
		for _, ch := range cs {
			s, err := ch.stats(ctx, gc)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	writes := func(s *shards.Stats) int { return s.ConfigMapWrites + s.StatusWrites + s.OtherWrites }
	// settle waits until no process has written for quiet.
	settle := func(cs []*child, quiet time.Duration) error {
		last, since := -1, time.Now()
		deadline := time.Now().Add(cfg.Timeout)
		for time.Now().Before(deadline) {
			st, err := sum(cs, false)
			if err != nil {
				return err
			}
			total := 0
			for _, s := range st {
				total += writes(s)
			}
			if total != last {
				last, since = total, time.Now()
			} else if time.Since(since) >= quiet {
				return nil
			}
			time.Sleep(250 * time.Millisecond)
		}
		return errors.New("writes did not settle")
	}
	// around returns the processes' counters before and after during.
	around := func(cs []*child, during func() error) (before, after []*shards.Stats, err error) {
		if before, err = sum(cs, false); err != nil {
			return nil, nil, err
		}
		if err := during(); err != nil {
			return nil, nil, err
		}
		after, err = sum(cs, false)
		return before, after, err
	}
	rev := 0
	change := func(cs []*child, row *ShardRow) error {
		before, after, err := around(cs, func() error {
			old := tracker.Hashes(cms)
			rev++
			t0 := time.Now()
			if err := (&Fleet{e: &Env{Client: c}}).patchShared(ctx, rev); err != nil {
				return err
			}
			at, err := tracker.WaitChanged(ctx, cms, old, cfg.Timeout)
			if err != nil {
				return err
			}
			row.ChangeTime, row.Affected = at.Sub(t0), len(cms)
			return settle(cs, 2*time.Second)
		})
		if err != nil {
			return err
		}
		for i := range after {
			row.Processes[i].ChangeCM = after[i].ConfigMapWrites - before[i].ConfigMapWrites
			row.Processes[i].ChangeStatus = after[i].StatusWrites - before[i].StatusWrites
			row.Applies += row.Processes[i].ChangeCM
			row.StatusPatches += row.Processes[i].ChangeStatus
		}
		return nil
	}
	rest := func(cs []*child, row *ShardRow) error {
		before, after, err := around(cs, func() error {
			time.Sleep(cfg.Steady)
			return nil
		})
		if err != nil {
			return err
		}
		for i := range after {
			row.Processes[i].RestWrites = writes(after[i]) - writes(before[i])
			row.RestWrites += row.Processes[i].RestWrites
		}
		return nil
	}
	fill := func(cs []*child, row *ShardRow) error {
		st, err := sum(cs, true)
		if err != nil {
			return err
		}
		seen := map[string]int{}
		for i, s := range st {
			row.Processes[i].Shard, row.Processes[i].Owned, row.Processes[i].HeapAfterGC = s.Shard, len(s.Owned), s.HeapAfterGC
			for _, k := range s.Owned {
				seen[k]++
			}
			row.Uncovered = max(row.Uncovered, s.Uncovered)
			run.Selector = s.Selector
		}
		row.Owned = len(seen)
		for _, n := range seen {
			if n > 1 {
				row.Overlap++
			}
		}
		return nil
	}
	whale := func(cs []*child, n int) error {
		if cfg.Whale == 0 {
			return nil
		}
		old := tracker.Hashes(whaleCMs)
		t0 := time.Now()
		if err := patchProject(ctx, c, "whale", 1000+rev); err != nil {
			return err
		}
		var lat []time.Duration
		for i, key := range smallCMs {
			time.Sleep(100 * time.Millisecond)
			ns := strings.Split(key, "/")[0]
			o := tracker.Hashes([]string{key})
			s0 := time.Now()
			if err := patchProject(ctx, c, ns, 1000+rev+i); err != nil {
				return err
			}
			at, err := tracker.WaitChanged(ctx, []string{key}, o, cfg.Timeout)
			if err != nil {
				return err
			}
			lat = append(lat, at.Sub(s0))
		}
		at, err := tracker.WaitChanged(ctx, whaleCMs, old, cfg.Timeout)
		if err != nil {
			return err
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		w := &WhaleResult{N: n, WhaleDrain: at.Sub(t0), Samples: len(lat)}
		if len(lat) > 0 {
			w.P50, w.P99, w.Mx = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
		}
		run.Whale = w
		rev += 1000
		return settle(cs, 2*time.Second)
	}

	// N = 1.
	logf(cfg, "%s: N=1", mode)
	one, err := start(1, "0")
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if _, err := tracker.WaitChanged(ctx, cms, nil, cfg.Timeout); err != nil {
		one.stop()
		return run, err
	}
	run.Converge = time.Since(t0)
	if err := settle([]*child{one}, 3*time.Second); err != nil {
		one.stop()
		return run, err
	}
	row1 := ShardRow{N: 1, Processes: make([]ProcRow, 1)}
	for _, step := range []func() error{
		func() error { return rest([]*child{one}, &row1) },
		func() error { return change([]*child{one}, &row1) },
		func() error { return fill([]*child{one}, &row1) },
	} {
		if err := step(); err != nil {
			one.stop()
			return run, err
		}
	}
	run.Rows = append(run.Rows, row1)
	logf(cfg, "%s: N=1 done: %+v", mode, row1)
	if err := whale([]*child{one}, 1); err != nil {
		one.stop()
		return run, err
	}
	one.stop()

	// N = Shards, each with its leader; shard 0 also with a warm standby.
	logf(cfg, "%s: N=%d", mode, cfg.Shards)
	var cs []*child
	defer func() {
		for _, ch := range cs {
			ch.stop()
		}
	}()
	for _, s := range plans[cfg.Shards].Shards {
		ch, err := start(cfg.Shards, s.Name)
		if err != nil {
			return run, err
		}
		cs = append(cs, ch)
	}
	if err := waitLeading(cs); err != nil {
		return run, err
	}
	standby, err := start(cfg.Shards, plans[cfg.Shards].Shards[0].Name)
	if err != nil {
		return run, err
	}
	rowN := ShardRow{N: cfg.Shards, Processes: make([]ProcRow, len(cs))}
	// Taking over a fleet N = 1 published: adoption, no writes.
	time.Sleep(cfg.Steady)
	if err := settle(cs, 3*time.Second); err != nil {
		return run, err
	}
	st, err := sum(cs, false)
	if err != nil {
		return run, err
	}
	for i, s := range st {
		rowN.Processes[i].TakeoverW = writes(s)
		rowN.TakeoverWrites += writes(s)
	}
	for _, step := range []func() error{
		func() error { return rest(cs, &rowN) },
		func() error { return change(cs, &rowN) },
		func() error { return fill(cs, &rowN) },
	} {
		if err := step(); err != nil {
			return run, err
		}
	}
	run.Rows = append(run.Rows, rowN)
	logf(cfg, "%s: N=%d done: %+v", mode, cfg.Shards, rowN)

	// Fail-over: kill shard 0's leader; change the platform at once.
	slice := rowN.Processes[0].Owned
	var sliceCMs []string
	s0, err := cs[0].stats(ctx, false)
	if err != nil {
		return run, err
	}
	for _, k := range s0.Owned {
		sliceCMs = append(sliceCMs, k+"-context")
	}
	before, err := standby.stats(ctx, false)
	if err != nil {
		return run, err
	}
	old := tracker.Hashes(sliceCMs)
	tk := time.Now()
	cs[0].kill()
	cs = cs[1:]
	rev++
	if err := (&Fleet{e: &Env{Client: c}}).patchShared(ctx, rev); err != nil {
		return run, err
	}
	at, err := tracker.WaitChanged(ctx, sliceCMs, old, cfg.Timeout)
	if err != nil {
		return run, err
	}
	if err := settle(append(cs, standby), 2*time.Second); err != nil {
		return run, err
	}
	after, err := standby.stats(ctx, false)
	if err != nil {
		return run, err
	}
	run.Failover = &FailoverResult{Slice: slice, Current: at.Sub(tk), StandbyWrites: writes(after) - writes(before), LeaseDuration: shard.DefaultLeaseDuration}
	cs = append(cs, standby)
	return run, nil
}

// patchProject changes the project Skill of ns.
func patchProject(ctx context.Context, c client.Client, ns string, rev int) error {
	s := &v1alpha1.Skill{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "project"}, s); err != nil {
		return err
	}
	s.Spec.Body = fmt.Sprintf("# project\n\nRevision %d.\n", rev)
	return c.Update(ctx, s)
}

func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kc, path)
}

// ShardMarkdown renders the runs as the tables of docs/benchmarks.md.
func ShardMarkdown(cfg ShardConfig, runs []*ShardRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Fleet: %d Workspaces over %d namespaces", cfg.Workspaces, cfg.Namespaces)
	if cfg.Whale > 0 {
		fmt.Fprintf(&b, ", plus a whale namespace of %d Workspaces and %d small tenants of 1", cfg.Whale, cfg.Small)
	}
	fmt.Fprintf(&b, "; each manager process: QPS %.0f, burst %d, %d workers; N=%d plan weighted by Workspaces per namespace.\n\n", cfg.QPS, cfg.Burst, cfg.Workers, cfg.Shards)
	for _, r := range runs {
		fmt.Fprintf(&b, "**Mode %s** (server-side sharded kinds: %v; converge from empty at N=1: %s)\n\n", r.Mode, r.Selector, r.Converge.Round(100*time.Millisecond))
		b.WriteString("| N | platform change: affected | Σ applies | Σ status patches | time | writes at rest (Σ) | takeover writes | Σ owned | overlap | uncovered | per process: shard, owned, heap after GC (MiB), change writes |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		var heap1 float64
		for _, row := range r.Rows {
			var procs []string
			for _, p := range row.Processes {
				mib := float64(p.HeapAfterGC) / (1 << 20)
				if row.N == 1 {
					heap1 = mib
				}
				ratio := ""
				if row.N > 1 && heap1 > 0 {
					ratio = fmt.Sprintf(" (%.2f of N=1)", mib/heap1)
				}
				procs = append(procs, fmt.Sprintf("%s: %d, %.1f%s, %d+%d", p.Shard, p.Owned, mib, ratio, p.ChangeCM, p.ChangeStatus))
			}
			fmt.Fprintf(&b, "| %d | %d | %d | %d | %s | %d | %d | %d | %d | %.3f | %s |\n", row.N, row.Affected, row.Applies, row.StatusPatches,
				row.ChangeTime.Round(100*time.Millisecond), row.RestWrites, row.TakeoverWrites, row.Owned, row.Overlap, row.Uncovered, strings.Join(procs, "; "))
		}
		if w := r.Whale; w != nil {
			fmt.Fprintf(&b, "\nWhale (N=%d): the whale's %d Workspaces drain in %s; %d small tenants' changes published during it: p50 %s, p99 %s, max %s.\n",
				w.N, cfg.Whale, w.WhaleDrain.Round(100*time.Millisecond), w.Samples, w.P50.Round(time.Millisecond), w.P99.Round(time.Millisecond), w.Mx.Round(time.Millisecond))
		}
		if f := r.Failover; f != nil {
			fmt.Fprintf(&b, "\nFail-over (N=%d, shard 0 killed with a warm standby, platform changed at once): its %d Workspaces current after %s (Lease duration %s); the standby wrote %d times (apply + status per changed Workspace: %d).\n",
				len(r.Rows[len(r.Rows)-1].Processes), f.Slice, f.Current.Round(100*time.Millisecond), f.LeaseDuration, f.StandbyWrites, 2*f.Slice)
		}
		b.WriteString("\n")
	}
	return b.String()
}
