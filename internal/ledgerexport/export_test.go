package ledgerexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// collector is an OTLP/HTTP receiver that decodes with the generated
// protobuf types: what a real collector reads.
type collector struct {
	mu      sync.Mutex
	logs    []*collogs.ExportLogsServiceRequest
	traces  []*coltrace.ExportTraceServiceRequest
	headers []http.Header
}

func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	decode := func(r *http.Request, m proto.Message) error {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				return err
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		return proto.Unmarshal(b, m)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, r *http.Request) {
		req := &collogs.ExportLogsServiceRequest{}
		if err := decode(r, req); err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			t.Errorf("logs: %v (content type %q)", err, r.Header.Get("Content-Type"))
			return
		}
		c.mu.Lock()
		c.logs, c.headers = append(c.logs, req), append(c.headers, r.Header.Clone())
		c.mu.Unlock()
	})
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		req := &coltrace.ExportTraceServiceRequest{}
		if err := decode(r, req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			t.Errorf("traces: %v", err)
			return
		}
		c.mu.Lock()
		c.traces = append(c.traces, req)
		c.mu.Unlock()
	})
	return c, testnet.ServeHandler(t, mux).URL
}

func record(tool string, seq int, at time.Time) (*ledger.Record, []byte) {
	r := &ledger.Record{Time: at.Format(time.RFC3339Nano), Event: "BeforeToolCall", Tool: tool, CallID: "c1",
		Verdict: "deny", Reason: "notes must not contain secrets", Surface: "before", Workspace: "team-a/dev", Context: "sha256:ab",
		ArgumentsDigest: "sha256:cd",
		Hooks:           []ledger.Hook{{Extension: "review-extension", Hook: "no-secrets", Outcome: "deny", Start: at, Micros: 40}}}
	return r, []byte(fmt.Sprintf(`{"ledger":"loadout.dev/decisions/v1","seq":%d}`, seq))
}

// Every record goes out as a log whose body is its line, and a tool call's
// record as a span with a child per hook, encoded as the generated OTLP
// types decode them: resource, scope, times, ids, attributes, parentage.
// OTEL_EXPORTER_OTLP_HEADERS and gzip compression are honoured.
func TestExport_LogsAndSpansDecodeAsOTLP(t *testing.T) {
	col, url := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc,x-tenant=team-a")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "k8s.pod.name=agent-0")
	exp, err := FromEnv(t.Context(), String("loadout.workspace", "team-a/dev"))
	if err != nil || exp == nil {
		t.Fatalf("FromEnv: %v, %v", exp, err)
	}
	at := time.Unix(1700000000, 123000000)
	var lines [][]byte
	for i, tool := range []string{"review_note", ""} {
		r, line := record(tool, i+1, at)
		lines = append(lines, line)
		exp.Record(line, r)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.logs) != 1 || len(col.traces) != 1 {
		t.Fatalf("%d log and %d trace requests, want 1 and 1", len(col.logs), len(col.traces))
	}
	if h := col.headers[0]; h.Get("Authorization") != "Bearer abc" || h.Get("X-Tenant") != "team-a" {
		t.Errorf("headers %v", h)
	}
	rl := col.logs[0].ResourceLogs
	if len(rl) != 1 || len(rl[0].ScopeLogs) != 1 || rl[0].ScopeLogs[0].Scope.GetName() != scope {
		t.Fatalf("resource logs %v", rl)
	}
	res := map[string]string{}
	for _, kv := range rl[0].Resource.Attributes {
		res[kv.Key] = kv.Value.GetStringValue()
	}
	if res["service.name"] != "loadout-hostd" || res["loadout.workspace"] != "team-a/dev" || res["k8s.pod.name"] != "agent-0" {
		t.Errorf("resource %v", res)
	}
	recs := rl[0].ScopeLogs[0].LogRecords
	if len(recs) != 2 {
		t.Fatalf("%d log records", len(recs))
	}
	for i, lr := range recs {
		if lr.Body.GetStringValue() != string(lines[i]) || lr.TimeUnixNano != uint64(at.UnixNano()) || lr.SeverityNumber != 9 || lr.EventName != "loadout.decision" {
			t.Errorf("log %d: %v", i, lr)
		}
	}
	attrs := map[string]string{}
	for _, kv := range recs[0].Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	if attrs["loadout.verdict"] != "deny" || attrs["gen_ai.tool.name"] != "review_note" {
		t.Errorf("log attributes %v", attrs)
	}

	spans := col.traces[0].ResourceSpans[0].ScopeSpans[0].Spans
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the call and its hook", len(spans))
	}
	var call, hook *tracepb.Span
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "hook ") {
			hook = s
		} else {
			call = s
		}
	}
	if call == nil || hook == nil || call.Name != "BeforeToolCall review_note" || hook.Name != "hook review-extension/no-secrets" {
		t.Fatalf("spans %v", spans)
	}
	if !bytes.Equal(hook.ParentSpanId, call.SpanId) || !bytes.Equal(hook.TraceId, call.TraceId) || len(call.ParentSpanId) != 0 {
		t.Errorf("hook span's parent %x, call %x", hook.ParentSpanId, call.SpanId)
	}
	if hook.EndTimeUnixNano-hook.StartTimeUnixNano != 40_000 || call.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("hook %d..%d, call kind %v", hook.StartTimeUnixNano, hook.EndTimeUnixNano, call.Kind)
	}
	if got := hex.EncodeToString(recs[0].TraceId); got != hex.EncodeToString(call.TraceId) {
		t.Errorf("the call's log carries trace %s, its span %x", got, call.TraceId)
	}
}

// An attribute's value is a string AnyValue, written even when empty (an
// empty string is a value), and the resource the environment describes is
// overridden by hostd's own attributes, as the SDK's resource merged them.
func TestWire_StringValuesAndResource(t *testing.T) {
	var got tracepb.Span
	// Field 9 of a Span is its attributes.
	var wrapped []byte
	for _, kv := range []Attr{String("a", "x"), String("empty", "")} {
		wrapped = message(wrapped, 9, keyValue(kv))
	}
	if err := proto.Unmarshal(wrapped, &got); err != nil {
		t.Fatal(err)
	}
	a := got.Attributes
	if len(a) != 2 || a[0].Value.GetStringValue() != "x" || a[1].Value.Value == nil || a[1].Value.GetStringValue() != "" {
		t.Fatalf("attributes %v", a)
	}
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=other,k8s.pod.name=agent%2D0,bad,loadout.workspace=from-env")
	t.Setenv("OTEL_SERVICE_NAME", "also-other")
	res := resourceFromEnv([]Attr{String("loadout.workspace", "team-a/dev")})
	want := []Attr{{"service.name", "loadout-hostd"}, {"k8s.pod.name", "agent-0"}, {"loadout.workspace", "team-a/dev"}}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("resource %v, want %v", res, want)
	}
}

// A misconfiguration is an error naming the variable; no endpoint is no
// exporter.
func TestFromEnv_Configuration(t *testing.T) {
	if exp, err := FromEnv(t.Context()); exp != nil || err != nil {
		t.Fatalf("no endpoint: %v, %v", exp, err)
	}
	for name, env := range map[string][2]string{
		"grpc":        {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
		"compression": {"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"},
		"timeout":     {"OTEL_EXPORTER_OTLP_TIMEOUT", "soon"},
		"certificate": {"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			t.Setenv(env[0], env[1])
			if _, err := FromEnv(t.Context()); err == nil || !strings.Contains(err.Error(), env[0]) {
				t.Fatalf("%s=%s: %v", env[0], env[1], err)
			}
		})
	}
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "ftp://collector/v1/logs")
	if _, err := FromEnv(t.Context()); err == nil || !strings.Contains(err.Error(), "http or https") {
		t.Fatalf("an ftp endpoint: %v", err)
	}
}

// hostd's anchors go out as logs too, in chain order with the records,
// each body the anchor's very line: the collector's copy is what `loadout
// audit verify --anchors` checks a ledger against.
func TestExport_AnchorsGoOutAsLogsWhoseBodyVerifies(t *testing.T) {
	col, url := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	exp, err := FromEnv(t.Context())
	if err != nil || exp == nil {
		t.Fatalf("FromEnv: %v, %v", exp, err)
	}
	var file bytes.Buffer
	w := ledger.NewWriter(&file)
	w.OnRecord, w.OnAnchor = exp.Record, exp.Anchor
	if err := w.EnableAnchors(1); err != nil {
		t.Fatal(err)
	}
	w.Write(&ledger.Record{Time: time.Now().Format(time.RFC3339Nano), Surface: "before", Event: "BeforeToolCall", Verdict: "allowed"})
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	var anchors []string
	for _, req := range col.logs {
		for _, rl := range req.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					if lr.EventName == "loadout.decision.anchor" {
						anchors = append(anchors, lr.Body.GetStringValue()+"\n")
					}
				}
			}
		}
	}
	if len(anchors) != 2 {
		t.Fatalf("%d anchors exported, want the chain's key (seq 0) and seq 1", len(anchors))
	}
	rep, err := ledger.VerifyAnchored(&file, strings.NewReader(strings.Join(anchors, "")))
	if err != nil || len(rep.Forgeries) != 0 || rep.Anchors != 2 || rep.Summary.Records != 1 {
		t.Fatalf("the ledger against the collector's anchors: %+v, %v", rep, err)
	}
}

// The SDK's variables that shaped export before hostd wrote it itself still
// do: OTEL_TRACES_SAMPLER=always_off exports no span (the call's log then
// carries its trace unsampled), an attribute value length limit cuts values
// and a count limit drops attributes, counted, and OTEL_BLRP_SCHEDULE_DELAY
// sends a log without waiting for shutdown.
func TestExport_SDKVariablesStillApply(t *testing.T) {
	col, url := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", "3")
	t.Setenv("OTEL_ATTRIBUTE_COUNT_LIMIT", "2")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "20")
	exp, err := FromEnv(t.Context())
	if err != nil || exp == nil {
		t.Fatalf("FromEnv: %v, %v", exp, err)
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	r, line := record("review_note", 1, time.Now())
	exp.Record(line, r)
	var got []*collogs.ExportLogsServiceRequest
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no log within the schedule delay")
		}
		col.mu.Lock()
		got = append(got, col.logs...)
		col.mu.Unlock()
	}
	lr := got[0].ResourceLogs[0].ScopeLogs[0].LogRecords[0]
	if len(lr.Attributes) != 2 || lr.DroppedAttributesCount != 2 || lr.Attributes[1].Value.GetStringValue() != "den" {
		t.Errorf("attributes %v, dropped %d", lr.Attributes, lr.DroppedAttributesCount)
	}
	if len(lr.TraceId) != 16 || lr.Flags != 0 {
		t.Errorf("trace %x flags %d, want a trace, unsampled", lr.TraceId, lr.Flags)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.traces) != 0 {
		t.Errorf("%d trace requests with the sampler off", len(col.traces))
	}
}
