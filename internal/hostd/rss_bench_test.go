package hostd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// BenchmarkHostd_PeakRSS_32ConcurrentMaximalRequests starts a real
// `loadout hostd` process and sends it rounds of 32 concurrent 1 MiB calls
// shaped to cost the most memory to decode (a list of empty objects), then
// reports the process's peak resident memory (VmHWM) idle and after the load,
// and how many of each round's 32 calls were served or told to retry (503
// after --queue-wait: the decode budget lets ~2 MiB of JSON decode at once).
// The sample Deployment gives hostd 128Mi.
func BenchmarkHostd_PeakRSS_32ConcurrentMaximalRequests(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read peak RSS")
	}
	bin := hostdBinary(b)
	// hostd sets the runtime's soft limit itself (SetMemoryLimitFromCgroup):
	// SidecarSoftLimit in the sample's 128Mi container as without a cgroup
	// limit (this machine's case), so "sidecar-default" leaves it to hostd.
	// The 80% of 128Mi it set before the soft limit stands in as an explicit
	// GOMEMLIMIT, next to a run with no limit at all.
	b.Run("sidecar-default", func(b *testing.B) { peakRSSUnderLoad(b, bin, "GOMEMLIMIT=") })
	b.Run("80pct-of-128Mi", func(b *testing.B) { peakRSSUnderLoad(b, bin, "GOMEMLIMIT=107374182") })
	b.Run("no-limit", func(b *testing.B) { peakRSSUnderLoad(b, bin, "GOMEMLIMIT=off") })
}

func peakRSSUnderLoad(b *testing.B, bin, env string) {
	b.Helper()
	base, pid := startHostd(b, bin, env, contextData(b, fixedRegistry()))
	idle := peakRSS(b, pid)

	body := maximalCall()
	b.SetBytes(int64(len(body)) * 32)
	statuses := postRounds(b, base+"/v1/before", body, 32, func(resp *http.Response) string {
		_, _ = io.Copy(io.Discard, resp.Body)
		return strconv.Itoa(resp.StatusCode)
	})
	// A valid call is served (200) or, when it waited QueueWait for the
	// decode budget, told to retry (503); anything else is a defect.
	served, busy := strconv.Itoa(http.StatusOK), strconv.Itoa(http.StatusServiceUnavailable)
	for code, n := range statuses {
		if code != served && code != busy {
			b.Errorf("%d maximal calls were answered %s, want 200 or 503", n, code)
		}
	}
	b.ReportMetric(float64(statuses[served])/float64(b.N), "served/round")
	b.ReportMetric(float64(statuses[busy])/float64(b.N), "busy/round")
	b.ReportMetric(float64(idle)/(1<<20), "idle-peak-MiB")
	peak := peakRSS(b, pid)
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(peak)/(48<<20), "x-target") // target: at most 48 MiB (docs/benchmarks.md; it was 80)
}

// postRounds sends b.N rounds of n concurrent POSTs of body to url, timed,
// and counts the answers by what classify makes of each (classify may read
// the body; postRounds closes it).
func postRounds(b *testing.B, url string, body []byte, n int, classify func(*http.Response) string) map[string]int {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var mu sync.Mutex
	counts := map[string]int{}
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				outcome := classify(resp)
				_ = resp.Body.Close()
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	return counts
}

// maximalCall is the costliest before call hostd accepts: just under
// MaxJSONValues empty objects, padded with a string to just under
// MaxBodyBytes.
func maximalCall() []byte {
	const head, tail = `{"call":{"id":"1","name":"review_note","arguments":{"pad":"`, `]}}}`
	objects := (MaxJSONValues - 16)
	pad := MaxBodyBytes - len(head) - len(`","l":[`) - 3*objects - len(tail)
	var buf bytes.Buffer
	buf.WriteString(head)
	buf.WriteString(strings.Repeat("x", pad))
	buf.WriteString(`","l":[`)
	for i := range objects {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("{}")
	}
	buf.WriteString(tail)
	return buf.Bytes()
}

// peakRSS reads VmHWM (peak resident set size) of a process, in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	return procStatus(b, pid, "VmHWM")
}

// procStatus reads one memory field of /proc/PID/status (VmHWM, VmRSS,
// RssAnon, RssFile), in bytes.
func procStatus(b *testing.B, pid int, field string) int64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc status", field)
	return 0
}

// BenchmarkHostd_IdleRSS starts the sidecar binary (loadout-hostd) and the
// whole CLI (`loadout hostd`), both built as the image builds them, on the
// same context, and reports each one's resident memory once it serves the
// context and has settled, split into anonymous memory (heap, stacks) and
// file-backed pages of the binary itself. The target is 20 MiB idle (issue
// 45; it was 24).
func BenchmarkHostd_IdleRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read resident memory")
	}
	const target = 20 << 20
	for _, name := range []string{"loadout-hostd", "loadout"} {
		bin := buildStatic(b, name)
		b.Run(name, func(b *testing.B) {
			var rss, anon, file int64
			for range b.N {
				_, pid := startHostd(b, bin, "GOMEMLIMIT=107374182", contextData(b, fixedRegistry()))
				time.Sleep(time.Second) // let start-up garbage be collected
				rss, anon, file = procStatus(b, pid, "VmRSS"), procStatus(b, pid, "RssAnon"), procStatus(b, pid, "RssFile")
			}
			b.ReportMetric(float64(rss)/(1<<20), "idle-MiB")
			b.ReportMetric(float64(anon)/(1<<20), "anon-MiB")
			b.ReportMetric(float64(file)/(1<<20), "file-MiB")
			b.ReportMetric(float64(rss)/target, "x-target")
		})
	}
}

// BenchmarkHostd_IdleRSS_Interleaved measures the idle resident memory of
// binaries built elsewhere (other commits, variants), named in
// $HOSTD_IDLE_BINS as name=path,name=path: each round starts every binary in
// turn on the same context, as BenchmarkHostd_IdleRSS does, so a load that
// comes and goes touches them all alike. It reports each binary's lowest and
// highest VmRSS and its mean RssAnon and RssFile over the rounds (b.N).
func BenchmarkHostd_IdleRSS_Interleaved(b *testing.B) {
	interleavedIdleRSS(b, nil)
}

// BenchmarkHostd_IdleRSSAfterCalls_Interleaved is
// BenchmarkHostd_IdleRSS_Interleaved for a sidecar that has served its
// agent: once ready and settled, each process answers one of each call an
// agent makes (before, after, an event, render, activate, the registry),
// settles again, and only then is read. hostd gives back the pages only its
// start-up touched (internal/exepages); those calls' code comes back, and
// this says how much. It also reports the first /v1/before's latency, which
// pays for those pages' faults.
func BenchmarkHostd_IdleRSSAfterCalls_Interleaved(b *testing.B) {
	interleavedIdleRSS(b, agentCalls)
}

// interleavedIdleRSS runs the binaries of $HOSTD_IDLE_BINS in turn, each
// round, and reads each one's resident memory a second after it is ready,
// or, given use, a second after use(base) returned. use reports a latency
// (the first call's) to be averaged per binary.
func interleavedIdleRSS(b *testing.B, use func(b *testing.B, base string) time.Duration) {
	b.Helper()
	spec := os.Getenv("HOSTD_IDLE_BINS")
	if spec == "" {
		b.Skip("set HOSTD_IDLE_BINS=name=path,... (binaries built as buildStatic builds them)")
	}
	type binary struct {
		name, path    string
		lo, hi        int64
		anon, file, n int64
		first         time.Duration
	}
	var bins []*binary
	for nb := range strings.SplitSeq(spec, ",") {
		name, path, ok := strings.Cut(nb, "=")
		if !ok {
			b.Fatalf("HOSTD_IDLE_BINS: %q is not name=path", nb)
		}
		bins = append(bins, &binary{name: name, path: path})
	}
	dir := b.TempDir()
	resourcestest.WriteConfigMapDir(b, dir, contextData(b, fixedRegistry()))
	for range b.N {
		for _, bin := range bins {
			base, pid, stop := runHostd(b, bin.path, "GOMEMLIMIT=107374182", dir)
			b.Cleanup(stop)
			time.Sleep(time.Second) // let start-up garbage be collected
			if use != nil {
				bin.first += use(b, base)
				time.Sleep(time.Second)
			}
			rss := procStatus(b, pid, "VmRSS")
			if bin.n == 0 || rss < bin.lo {
				bin.lo = rss
			}
			bin.hi = max(bin.hi, rss)
			bin.anon += procStatus(b, pid, "RssAnon")
			bin.file += procStatus(b, pid, "RssFile")
			bin.n++
			stop() // one process at a time
		}
	}
	for _, bin := range bins {
		b.ReportMetric(float64(bin.lo)/(1<<20), bin.name+"-idle-min-MiB")
		b.ReportMetric(float64(bin.hi)/(1<<20), bin.name+"-idle-max-MiB")
		b.ReportMetric(float64(bin.anon)/float64(bin.n)/(1<<20), bin.name+"-anon-MiB")
		b.ReportMetric(float64(bin.file)/float64(bin.n)/(1<<20), bin.name+"-file-MiB")
		if use != nil {
			b.ReportMetric(float64(bin.first.Microseconds())/float64(bin.n), bin.name+"-first-before-µs")
		}
	}
}

// agentCalls makes one of each call an agent makes of the context
// fixedRegistry builds, each answered 200, and returns how long the first
// (a /v1/before with a CEL hook) took.
func agentCalls(b *testing.B, base string) time.Duration {
	b.Helper()
	client := &http.Client{}
	start := time.Now()
	postOK(b, client, base+"/v1/before", []byte(`{"call":{"id":"c","name":"review_note","arguments":{"text":"looks good"}},"acceptArguments":true}`))
	first := time.Since(start)
	for _, c := range []struct{ path, body string }{
		{"/v1/after", `{"call":{"id":"c","name":"review_note","arguments":{"text":"looks good"}},"result":{"toolCallId":"c","toolName":"review_note","isError":false,"content":[{"type":"text","text":"ok"}]}}`},
		{"/v1/events/UserInput", `{"session":{"id":"s-1"},"prompt":{"text":"review parser.go"}}`},
		{"/v1/render", `{"template":"review","args":{"file":"a.go","owner":"me"}}`},
		{"/v1/activate", `{"skill":"review"}`},
	} {
		postOK(b, client, base+c.path, []byte(c.body))
	}
	resp, err := client.Get(base + "/v1/registry")
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET /v1/registry: %d", resp.StatusCode)
	}
	return first
}

// hostdBinary builds the sidecar binary, loadout-hostd, from this tree as the
// image builds it, with its fetch helper loadout-fetch beside it as in the
// image, or returns $HOSTD_BENCH_BIN when set (a binary of another commit,
// for before/after figures measured side by side with the same benchmark,
// with that commit's helper beside it; a `loadout` CLI binary is run as
// `loadout hostd`).
func hostdBinary(b testing.TB) string {
	b.Helper()
	if bin := os.Getenv("HOSTD_BENCH_BIN"); bin != "" {
		return bin
	}
	bin := buildStatic(b, "loadout-hostd")
	buildStaticInto(b, filepath.Dir(bin), "loadout-fetch")
	return bin
}

// buildStatic builds ./cmd/NAME as the Dockerfile does (static, stripped),
// so memory figures are those of the shipped binary.
func buildStatic(b testing.TB, name string) string {
	b.Helper()
	return buildStaticInto(b, b.TempDir(), name)
}

// buildStaticInto is buildStatic into dir.
func buildStaticInto(b testing.TB, dir, name string) string {
	b.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "github.com/loadout-dev/loadout/cmd/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

// hostdArgs are the arguments that start hostd from bin: the CLI needs its
// hostd command named, the sidecar binary is hostd.
func hostdArgs(bin string) []string {
	if filepath.Base(bin) == "loadout" {
		return []string{"hostd"}
	}
	return nil
}

// startHostd runs `loadout hostd` on the context data with env added and
// waits until it is ready; it returns its base URL and pid.
func startHostd(b testing.TB, bin, env string, data map[string]string, args ...string) (string, int) {
	b.Helper()
	dir := b.TempDir()
	resourcestest.WriteConfigMapDir(b, dir, data)
	return startHostdOn(b, bin, env, dir, args...)
}

// startHostdOn is startHostd on a context directory the caller writes (and
// may write again, as a ConfigMap update does).
func startHostdOn(b testing.TB, bin, env, dir string, args ...string) (string, int) {
	b.Helper()
	base, pid, stop := runHostd(b, bin, env, dir, args...)
	b.Cleanup(stop)
	return base, pid
}

// runHostd is startHostdOn that leaves stopping the process to the caller.
func runHostd(b testing.TB, bin, env, dir string, args ...string) (base string, pid int, stop func()) {
	b.Helper()
	addr := testnet.FreeAddr(b)
	ctx, cancel := context.WithCancel(context.Background())
	args = append(append(hostdArgs(bin), "--allow-unsigned-context", "--context-dir", dir, "--addr", addr), args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = io.Discard
	cmd.Env = append(os.Environ(), env)
	if err := cmd.Start(); err != nil {
		cancel()
		b.Fatal(err)
	}
	stop = sync.OnceFunc(func() { cancel(); _ = cmd.Wait() })
	base = "http://" + addr
	testnet.WaitStatus(b, base+"/readyz", http.StatusOK)
	return base, cmd.Process.Pid, stop
}

// BenchmarkHostd_PeakRSS_16ConcurrentToolAnswersOf1MiBEmptyObjects starts a
// real `loadout hostd` whose runnable tool's Service (a local server)
// answers every call with 1 MiB of {} values (within the byte limit: ~350k
// values, ~100 MB once decoded), and sends it rounds of 16 concurrent
// POST /v1/tools calls. It reports the process's peak resident memory
// (VmHWM) idle and after the load, and how many calls came back as error
// results (the answer refused) or succeeded. The sample gives hostd 128Mi.
func BenchmarkHostd_PeakRSS_16ConcurrentToolAnswersOf1MiBEmptyObjects(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read peak RSS")
	}
	bin := hostdBinary(b)
	answer := emptyObjectsAnswer(1 << 20)
	svc := testnet.Serve(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write(answer)
	})
	data := contextData(b, runnableRegistry(svc.URL, 30))
	b.Run("sample-128Mi-limit", func(b *testing.B) { toolAnswerAttack(b, bin, "GOMEMLIMIT=107374182", data) })
}

func toolAnswerAttack(b *testing.B, bin, env string, data map[string]string) {
	b.Helper()
	base, pid := startHostd(b, bin, env, data)
	idle := peakRSS(b, pid)
	body := []byte(`{"call":{"id":"t","arguments":{"text":"hi"}}}`)
	outcomes := postRounds(b, base+"/v1/tools/review_note", body, 16, func(resp *http.Response) string {
		var out ToolRunResponse
		switch err := json.NewDecoder(resp.Body).Decode(&out); {
		case err != nil:
			return strconv.Itoa(resp.StatusCode)
		case out.Result.IsError:
			return "refused"
		default:
			return "decoded"
		}
	})
	b.ReportMetric(float64(outcomes["refused"])/float64(b.N), "refused/round")
	b.ReportMetric(float64(outcomes["decoded"])/float64(b.N), "decoded/round")
	b.ReportMetric(float64(idle)/(1<<20), "idle-peak-MiB")
	b.ReportMetric(float64(peakRSS(b, pid))/(1<<20), "peak-MiB")
}

// BenchmarkHostd_PeakRSS_MCPSessionFlood starts a real `loadout hostd` and
// opens 20,000 MCP sessions (initialize without ever ending them), as a
// local process could, then reports how many hostd accepted and its peak
// resident memory (VmHWM).
func BenchmarkHostd_PeakRSS_MCPSessionFlood(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read peak RSS")
	}
	bin := hostdBinary(b)
	base, pid := startHostd(b, bin, "GOMEMLIMIT=107374182", contextData(b, fixedRegistry()))
	idle := peakRSS(b, pid)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	const sessions = 20_000
	accepted := 0
	b.ResetTimer()
	for range b.N {
		var (
			wg sync.WaitGroup
			mu sync.Mutex
		)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < sessions; i += 8 {
					req, _ := http.NewRequest(http.MethodPost, base+MCPPath, strings.NewReader(mcpInitialize))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.Header.Get("Mcp-Session-Id") != "" {
						mu.Lock()
						accepted++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	// Sessions stay open across rounds: accepted is the total over all
	// b.N × 20,000 attempts.
	b.ReportMetric(float64(accepted), "sessions-accepted-total")
	b.ReportMetric(float64(idle)/(1<<20), "idle-peak-MiB")
	b.ReportMetric(float64(peakRSS(b, pid))/(1<<20), "peak-MiB")
}

// BenchmarkHostd_RoundTrip_Process measures what an agent pays per before
// call to a real hostd process (the shipped sidecar binary) over loopback
// with keep-alive, with a shell-aware guard that parses the command, at Go's
// default collector pace and at GOGC=50 (what hostd ran with before), side
// by side. Across a process boundary a collection cycle of the small heap
// shows in the tail. The target is hostd's own p99 ≤ 0.5 ms.
func BenchmarkHostd_RoundTrip_Process(b *testing.B) {
	bin := hostdBinary(b)
	reg := fixedRegistry()
	reg.Deny = nil
	reg.Hooks = append(reg.Hooks, contract.Hook{Extension: "review-extension", Name: "no-recursive-force", Event: contract.EventBeforeToolCall,
		Tools: []string{"shell"}, TimeoutSeconds: 10, CEL: &contract.CELHook{Message: "no rm -rf",
			Expression: "!shell.commands(call.arguments.command).exists(c, c.name == 'rm' && c.hasFlag('r', 'recursive') && c.hasFlag('f', 'force'))"}})
	body := []byte(`{"call":{"id":"c","name":"bash","arguments":{"command":"ls -la"}},"acceptArguments":true}`)
	for _, pace := range []struct{ name, env string }{{"default-pace", "GOGC="}, {"GOGC=50", "GOGC=50"}} {
		b.Run(pace.name, func(b *testing.B) {
			base, _ := startHostd(b, bin, pace.env, contextData(b, reg))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			measure(b, func() { postOK(b, client, base+"/v1/before", body) })
		})
	}
}
