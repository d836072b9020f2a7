package ledgerexport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/loadout-dev/loadout/internal/ledger"
)

// scope names the instrumentation in every exported log and span.
const scope = "github.com/loadout-dev/loadout/hostd"

// Exporter sends ledger records over OTLP. Record never blocks: the SDK's
// batch processors queue, and drop when their queue is full.
type Exporter struct {
	logs   *sdklog.LoggerProvider
	spans  *sdktrace.TracerProvider
	logger otellog.Logger
	tracer trace.Tracer
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
// (its pod, its Workspace) on every log and span.
func FromEnv(ctx context.Context, attrs ...attribute.KeyValue) (*Exporter, error) {
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
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(append([]attribute.KeyValue{semconv.ServiceName("loadout-hostd")}, attrs...)...))
	if err != nil && res == nil {
		return nil, fmt.Errorf("OTLP resource: %w", err)
	}
	// A signal whose endpoint is not named is not exported (the SDK's
	// providers then make no-op loggers and tracers).
	var logOpts []sdklog.LoggerProviderOption
	if logsOn {
		logOpts = append(logOpts, sdklog.WithProcessor(sdklog.NewBatchProcessor(logExporter{logs})))
	}
	var spanOpts []sdktrace.TracerProviderOption
	if tracesOn {
		spanOpts = append(spanOpts, sdktrace.WithBatcher(spanExporter{traces}))
	}
	e := &Exporter{
		logs:  sdklog.NewLoggerProvider(append(logOpts, sdklog.WithResource(res))...),
		spans: sdktrace.NewTracerProvider(append(spanOpts, sdktrace.WithResource(res))...),
	}
	e.logger = e.logs.Logger(scope)
	e.tracer = e.spans.Tracer(scope)
	return e, nil
}

// Record exports one ledger record: line is the record as the ledger file
// holds it (no newline). It is a ledger.Writer's OnRecord: called in chain
// order, it must not keep line.
func (e *Exporter) Record(line []byte, r *ledger.Record) {
	at, err := time.Parse(time.RFC3339Nano, r.Time)
	if err != nil {
		at = time.Now()
	}
	var rec otellog.Record
	rec.SetTimestamp(at)
	rec.SetEventName("loadout.decision")
	rec.SetSeverity(otellog.SeverityInfo)
	rec.SetBody(otellog.StringValue(string(line)))
	rec.AddAttributes(
		otellog.String("loadout.event", r.Event),
		otellog.String("loadout.verdict", r.Verdict),
		otellog.String("loadout.surface", r.Surface),
	)
	if r.Tool != "" {
		rec.AddAttributes(otellog.String("gen_ai.tool.name", r.Tool))
	}
	ctx := context.Background()
	if r.Tool != "" {
		ctx = e.span(r, at)
	}
	e.logger.Emit(ctx, rec)
}

// Anchor exports one ledger anchor (hostd's signed chain head) as a log
// whose body is the anchor's very line, so the collector's copy is what
// `loadout audit verify --anchors` reads. A ledger.Writer's OnAnchor.
func (e *Exporter) Anchor(line []byte) {
	var rec otellog.Record
	rec.SetTimestamp(time.Now())
	rec.SetEventName("loadout.decision.anchor")
	rec.SetSeverity(otellog.SeverityInfo)
	rec.SetBody(otellog.StringValue(string(line)))
	e.logger.Emit(context.Background(), rec)
}

// span records a tool call's verdict: from the first hook's start (the
// record's time when none ran) to its last hook's end, a child per hook.
// It returns a context holding the span, so the log is correlated with it.
func (e *Exporter) span(r *ledger.Record, at time.Time) context.Context {
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
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.tool.name", r.Tool),
		attribute.String("gen_ai.tool.call.id", r.CallID),
		attribute.String("loadout.event", r.Event),
		attribute.String("loadout.verdict", r.Verdict),
		attribute.String("loadout.surface", r.Surface),
		attribute.String("loadout.workspace", r.Workspace),
		attribute.String("loadout.context", r.Context),
		attribute.String("loadout.arguments_digest", r.ArgumentsDigest),
	}
	if r.Reason != "" {
		attrs = append(attrs, attribute.String("loadout.reason", r.Reason))
	}
	if r.Approval != nil {
		attrs = append(attrs, attribute.String("loadout.approval.name", r.Approval.Name), attribute.String("loadout.approval.decision", r.Approval.Decision))
	}
	ctx, span := e.tracer.Start(context.Background(), r.Event+" "+r.Tool, trace.WithTimestamp(start), trace.WithAttributes(attrs...),
		trace.WithSpanKind(trace.SpanKindInternal))
	for _, h := range r.Hooks {
		_, hs := e.tracer.Start(ctx, "hook "+h.Extension+"/"+h.Hook, trace.WithTimestamp(h.Start),
			trace.WithAttributes(attribute.String("loadout.hook.extension", h.Extension), attribute.String("loadout.hook.name", h.Hook),
				attribute.String("loadout.hook.outcome", h.Outcome)))
		hs.End(trace.WithTimestamp(h.Start.Add(time.Duration(h.Micros) * time.Microsecond)))
	}
	span.End(trace.WithTimestamp(end))
	return ctx
}

// Shutdown flushes what is queued and stops, within ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	return errors.Join(e.spans.Shutdown(ctx), e.logs.Shutdown(ctx))
}
