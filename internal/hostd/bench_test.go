package hostd

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkRoundTrip_Before measures an agent's /v1/before call over loopback
// HTTP with keep-alive, against the §9 registry (a CEL before hook), and
// reports p50/p99 latency next to ns/op. DESIGN target: p99 ≤ 1 ms.
func BenchmarkRoundTrip_Before(b *testing.B) {
	_, ts, _ := newTestServer(b, fixedRegistry())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body := []byte(`{"call":{"id":"call-1","name":"review_note","arguments":{"text":"looks good"}}}`)
	url := ts.URL + "/v1/before"
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
