package ledgerexport

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/ledger"
)

// scope names the instrumentation in every exported log and span.
const scope = "github.com/loadout-dev/loadout/hostd"

// serviceName is the resource's service.name.
const serviceName = "loadout-hostd"

// Attr is a string attribute of a log, a span or the resource: every one
// hostd sends is a string.
type Attr struct{ Key, Value string }

// String is an Attr.
func String(key, value string) Attr { return Attr{Key: key, Value: value} }

// Exporter sends ledger records over OTLP. Record never blocks: each
// signal's batcher queues, and drops when its queue is full. It is what the
// OpenTelemetry SDK's providers and batch processors did for it, without
// linking the SDK: in the sidecar, which links this package whether or not
// export is configured, the SDK cost about 0.5-0.9 MiB of idle memory
// (docs/benchmarks.md).
type Exporter struct {
	resource             []Attr
	logs                 *batcher[logRecord]
	spans                *batcher[spanData]
	logLimits, spanLimit attrLimits
	sample               sampler
}

// logRecord is one OTLP log: a ledger record or anchor.
type logRecord struct {
	// time is the record's; observed when hostd emitted it, as the SDK set it.
	time, observed time.Time
	eventName      string
	body           string
	attrs          []Attr
	dropped        int
	traceID        [16]byte
	spanID         [8]byte
	sampled        bool
}

// spanData is one OTLP span.
type spanData struct {
	traceID          [16]byte
	spanID, parentID [8]byte
	name             string
	start, end       time.Time
	attrs            []Attr
	dropped          int
}

// Enabled reports whether the environment asks for OTLP export: the
// endpoint variable, for all signals or for logs or traces.
func Enabled() bool {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// FromEnv returns an Exporter configured by the OTEL_EXPORTER_OTLP_*
// variables, or nil when none names an endpoint. attrs describe this hostd
// (its pod, its Workspace) on every log and span, over the resource the
// environment describes (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME).
// ctx is not kept.
func FromEnv(_ context.Context, attrs ...Attr) (*Exporter, error) {
	if !Enabled() {
		return nil, nil
	}
	logs, logsOn, err := endpointFromEnv("LOGS", "/v1/logs")
	if err != nil {
		return nil, err
	}
	traces, tracesOn, err := endpointFromEnv("TRACES", "/v1/traces")
	if err != nil {
		return nil, err
	}
	e := &Exporter{resource: resourceFromEnv(attrs), logLimits: limitsFromEnv("LOGRECORD"), spanLimit: limitsFromEnv("SPAN"), sample: samplerFromEnv()}
	// A signal whose endpoint is not named is not exported.
	if logsOn {
		e.logs = newBatcher(batchFromEnv("OTEL_BLRP_", logsInterval), func(ctx context.Context, batch []logRecord) error {
			return logs.post(ctx, logsRequest(e.resource, batch))
		})
	}
	if tracesOn {
		e.spans = newBatcher(batchFromEnv("OTEL_BSP_", tracesInterval), func(ctx context.Context, batch []spanData) error {
			return traces.post(ctx, tracesRequest(e.resource, batch))
		})
	}
	return e, nil
}

// resourceFromEnv is the resource as the SDK's resource.New(WithFromEnv(),
// WithAttributes(service.name, attrs...)) made it: OTEL_RESOURCE_ATTRIBUTES
// (percent-encoded key=value pairs; a malformed pair is skipped), then
// OTEL_SERVICE_NAME, then ours, each later key replacing an earlier one.
func resourceFromEnv(attrs []Attr) []Attr {
	var out []Attr
	set := func(a Attr) {
		for i := range out {
			if out[i].Key == a.Key {
				out[i] = a
				return
			}
		}
		out = append(out, a)
	}
	for pair := range strings.SplitSeq(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(pair, "=")
		k, kerr := url.PathUnescape(strings.TrimSpace(k))
		v, verr := url.PathUnescape(strings.TrimSpace(v))
		if ok && kerr == nil && verr == nil && k != "" {
			set(Attr{k, v})
		}
	}
	if name := os.Getenv("OTEL_SERVICE_NAME"); name != "" {
		set(Attr{"service.name", name})
	}
	set(Attr{"service.name", serviceName})
	for _, a := range attrs {
		set(a)
	}
	return out
}

// Record exports one ledger record: line is the record as the ledger file
// holds it (no newline). It is a ledger.Writer's OnRecord: called in chain
// order, it must not keep line.
func (e *Exporter) Record(line []byte, r *ledger.Record) {
	at, err := time.Parse(time.RFC3339Nano, r.Time)
	if err != nil {
		at = time.Now()
	}
	rec := logRecord{time: at, observed: time.Now(), eventName: "loadout.decision", body: string(line), attrs: []Attr{
		{"loadout.event", r.Event}, {"loadout.verdict", r.Verdict}, {"loadout.surface", r.Surface},
	}}
	if r.Tool != "" {
		rec.attrs = append(rec.attrs, Attr{"gen_ai.tool.name", r.Tool})
		// The log is correlated with the call's span.
		rec.traceID, rec.spanID, rec.sampled = e.span(r, at)
	}
	if e.logs != nil {
		rec.attrs, rec.dropped = e.logLimits.apply(rec.attrs)
		e.logs.add(rec)
	}
}

// Anchor exports one ledger anchor (hostd's signed chain head) as a log
// whose body is the anchor's very line, so the collector's copy is what
// `loadout audit verify --anchors` reads. A ledger.Writer's OnAnchor.
func (e *Exporter) Anchor(line []byte) {
	if e.logs != nil {
		now := time.Now()
		e.logs.add(logRecord{time: now, observed: now, eventName: "loadout.decision.anchor", body: string(line)})
	}
}

// span records a tool call's verdict: from the first hook's start (the
// record's time when none ran) to its last hook's end, a child per hook.
// It returns the call span's ids, none when traces are not exported, and
// whether it was sampled (and so exported).
func (e *Exporter) span(r *ledger.Record, at time.Time) (traceID [16]byte, spanID [8]byte, sampled bool) {
	if e.spans == nil {
		return traceID, spanID, false
	}
	start, end := at, at
	for i, h := range r.Hooks {
		hs, he := h.Start, h.Start.Add(time.Duration(h.Micros)*time.Microsecond)
		if i == 0 || hs.Before(start) {
			start = hs
		}
		if he.After(end) || i == 0 {
			end = he
		}
	}
	if end.Before(start) {
		end = start
	}
	attrs := []Attr{
		{"gen_ai.tool.name", r.Tool}, {"gen_ai.tool.call.id", r.CallID}, {"loadout.event", r.Event},
		{"loadout.verdict", r.Verdict}, {"loadout.surface", r.Surface}, {"loadout.workspace", r.Workspace},
		{"loadout.context", r.Context}, {"loadout.arguments_digest", r.ArgumentsDigest},
	}
	if r.Reason != "" {
		attrs = append(attrs, Attr{"loadout.reason", r.Reason})
	}
	if r.Approval != nil {
		attrs = append(attrs, Attr{"loadout.approval.name", r.Approval.Name}, Attr{"loadout.approval.decision", r.Approval.Decision})
	}
	call := spanData{traceID: newTraceID(), spanID: newSpanID(), name: r.Event + " " + r.Tool, start: start, end: end}
	if !e.sample(call.traceID) {
		return call.traceID, call.spanID, false
	}
	call.attrs, call.dropped = e.spanLimit.apply(attrs)
	for _, h := range r.Hooks {
		hook := spanData{traceID: call.traceID, spanID: newSpanID(), parentID: call.spanID, name: "hook " + h.Extension + "/" + h.Hook,
			start: h.Start, end: h.Start.Add(time.Duration(h.Micros) * time.Microsecond)}
		hook.attrs, hook.dropped = e.spanLimit.apply([]Attr{{"loadout.hook.extension", h.Extension}, {"loadout.hook.name", h.Hook}, {"loadout.hook.outcome", h.Outcome}})
		e.spans.add(hook)
	}
	e.spans.add(call)
	return call.traceID, call.spanID, true
}

// newTraceID and newSpanID are random, never all zero (an invalid id), as
// the SDK's generator makes them.
func newTraceID() (id [16]byte) {
	for id == [16]byte{} {
		for i := range 2 {
			v := rand.Uint64()
			for j := range 8 {
				id[i*8+j] = byte(v >> (8 * j))
			}
		}
	}
	return id
}

func newSpanID() (id [8]byte) {
	for id == [8]byte{} {
		v := rand.Uint64()
		for j := range 8 {
			id[j] = byte(v >> (8 * j))
		}
	}
	return id
}

// Shutdown flushes what is queued and stops, within ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	var errs []error
	if e.spans != nil {
		errs = append(errs, e.spans.shutdown(ctx))
	}
	if e.logs != nil {
		errs = append(errs, e.logs.shutdown(ctx))
	}
	return errors.Join(errs...)
}
