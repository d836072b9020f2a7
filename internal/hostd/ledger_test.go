package hostd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"

	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/ledgerexport"
)

func TestLedger_OneChainedRecordPerVerdict(t *testing.T) {
	var sink testenv.SyncBuffer // read while hostd writes
	s, ts, _ := serveContext(t, contextData(t, lifecycleRegistry("http://127.0.0.1:1")), Options{Now: func() time.Time { return time.UnixMilli(42) },
		Ledger: ledger.NewWriter(&sink), Pod: "agent-0"})

	var before BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("1", "review_note", "fine"), &before)
	post(t, ts.URL+"/v1/before", callBody("2", "review_note", "a SECRET"), &before)
	post(t, ts.URL+"/v1/before", map[string]any{"acceptArguments": true,
		"call": map[string]any{"id": "3", "name": "bash", "arguments": map[string]any{"command": "terraform apply"}}}, &before)
	var ev EventResponse
	post(t, ts.URL+"/v1/events/UserInput", map[string]any{"prompt": map[string]any{"text": "the SECRET"}}, &ev)

	out := sink.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d records, want 4:\n%s", len(lines), out)
	}
	var recs []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	want := []struct{ tool, verdict, reason string }{
		{"review_note", "blocked", "rewriteRefused"}, {"review_note", "blocked", "hook"}, {"bash", "allowed", ""}, {"", "stopped", "hook"},
	}
	for i, w := range want {
		r := recs[i]
		if r["seq"] != float64(i+1) || r["verdict"] != w.verdict || (r["tool"] != nil && r["tool"] != w.tool) || (w.reason != "" && r["reason"] != w.reason) ||
			r["workspace"] != "team-a/ws" || r["pod"] != "agent-0" || r["context"] != servedHash(s) {
			t.Errorf("record %d: %v", i+1, r)
		}
	}
	if recs[1]["hooks"] == nil || !strings.Contains(lines[1], `"hook":"no-secrets","outcome":"denied"`) {
		t.Errorf("the denying hook is not named: %s", lines[1])
	}
	if recs[2]["rewritten"] != true || recs[2]["argumentsDigest"] == recs[2]["argumentsDigestAfter"] {
		t.Errorf("the rewrite is not recorded: %s", lines[2])
	}
	for _, secret := range []string{"SECRET", "terraform", "fine"} {
		if strings.Contains(out, secret) {
			t.Errorf("the ledger holds the arguments (%q)", secret)
		}
	}
	if _, b, err := ledger.Verify(strings.NewReader(out)); err != nil || b != nil {
		t.Fatalf("verify: %v %v", b, err)
	}
}

// BenchmarkRoundTrip_BeforeLedger is BenchmarkRoundTrip_Before with the
// decision ledger off, on (appending to a file), and on with OTLP export to
// an in-process receiver that reads and discards: the ledger's cost per
// call (docs/benchmarks.md).
func BenchmarkRoundTrip_BeforeLedger(b *testing.B) {
	body := []byte(`{"call":{"id":"call-1","name":"review_note","arguments":{"text":"looks good"}}}`)
	for _, mode := range []string{"off", "on-file", "on-file-otlp"} {
		b.Run(mode, func(b *testing.B) {
			var opts Options
			if mode != "off" {
				f, err := os.Create(filepath.Join(b.TempDir(), "ledger.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				opts.Ledger = ledger.NewWriter(f)
			}
			if mode == "on-file-otlp" {
				receiver := testnet.Serve(b, func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/x-protobuf")
				})
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
				exp, err := ledgerexport.FromEnv(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = exp.Shutdown(context.Background()) }()
				opts.Ledger.OnRecord = exp.Record
			}
			_, ts, _ := serveContext(b, contextData(b, fixedRegistry()), opts)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			measure(b, func() { postOK(b, client, ts.URL+"/v1/before", body) })
		})
	}
}

// Claude Code's http hook records its verdicts too, under its surface.
func TestLedger_ClaudeCodeHookRecords(t *testing.T) {
	var sink testenv.SyncBuffer
	_, ts, _ := serveContext(t, contextData(t, fixedRegistry()), Options{Ledger: ledger.NewWriter(&sink)})
	var got map[string]any
	post(t, ts.URL+ClaudeCodeHookPath, preToolUseInput("mcp__loadout__review_note", `{"text":"fine"}`), &got)
	post(t, ts.URL+ClaudeCodeHookPath, preToolUseInput("mcp__loadout__review_note", `{"text":"a SECRET"}`), &got)
	out := sink.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"surface":"claude-code"`) || !strings.Contains(lines[0], `"verdict":"allowed"`) ||
		!strings.Contains(lines[1], `"verdict":"blocked"`) || !strings.Contains(lines[1], `"hook":"no-secrets","outcome":"denied"`) {
		t.Fatalf("ledger:\n%s", out)
	}
	if _, b, err := ledger.Verify(strings.NewReader(out)); err != nil || b != nil {
		t.Fatalf("verify: %v %v", b, err)
	}
}
