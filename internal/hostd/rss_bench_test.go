package hostd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkHostd_PeakRSS_32ConcurrentMaximalRequests starts a real
// `loadout hostd` process and sends it rounds of 32 concurrent 1 MiB calls
// shaped to cost the most memory to decode (a list of empty objects), then
// reports the process's peak resident memory (VmHWM) idle and after the load,
// and how many of each round's 32 calls were served or told to retry (503
// after --queue-wait: the decode budget lets ~2 MiB of JSON decode at once).
// The sample Deployment gives hostd 128Mi (issue 11, item 6).
func BenchmarkHostd_PeakRSS_32ConcurrentMaximalRequests(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read peak RSS")
	}
	bin := filepath.Join(b.TempDir(), "loadout")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/loadout-dev/loadout/cmd/loadout").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	// In a pod hostd sets the runtime's soft limit to 80% of the container
	// limit (SetMemoryLimitFromCgroup); GOMEMLIMIT stands in for that here,
	// next to a run with no limit at all.
	b.Run("sample-128Mi-limit", func(b *testing.B) { peakRSSUnderLoad(b, bin, "GOMEMLIMIT=107374182") })
	b.Run("no-limit", func(b *testing.B) { peakRSSUnderLoad(b, bin, "GOMEMLIMIT=off") })
}

func peakRSSUnderLoad(b *testing.B, bin, env string) {
	dir := b.TempDir()
	writeConfigMapDir(b, dir, contextData(b, fixedRegistry()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "hostd", "--allow-unsigned-context", "--context-dir", dir, "--addr", addr)
	cmd.Stderr = io.Discard
	cmd.Env = append(os.Environ(), env)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("hostd never ready: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	idle := peakRSS(b, cmd.Process.Pid)

	body := maximalCall()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	b.SetBytes(int64(len(body)) * 32)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				resp, err := client.Post(base+"/v1/before", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	// A valid call is served (200) or, when it waited QueueWait for the
	// decode budget, told to retry (503); anything else is a defect.
	for code := range statuses {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			b.Errorf("%d maximal calls were answered %d, want 200 or 503", statuses[code], code)
		}
	}
	b.ReportMetric(float64(statuses[http.StatusOK])/float64(b.N), "served/round")
	b.ReportMetric(float64(statuses[http.StatusServiceUnavailable])/float64(b.N), "busy/round")
	b.ReportMetric(float64(idle)/(1<<20), "idle-peak-MiB")
	b.ReportMetric(float64(peakRSS(b, cmd.Process.Pid))/(1<<20), "peak-MiB")
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
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}
