package ledgerexport

import (
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP request bodies (opentelemetry-proto, collector/logs/v1 and
// collector/trace/v1) written with protowire, field by field. The OTLP Go
// exporters would do the same through generated types whose packages link
// gRPC and its gateway: in the agent-pod sidecar that cost 6 MiB of idle
// memory for two messages (docs/benchmarks.md). The bytes are the same
// protobuf any collector reads; the tests decode them with the generated
// types.

// message appends field num holding the message that body writes.
func message(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	inner := body(nil)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

func stringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func fixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func fixed32Field(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func varintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// unixNano is a time as OTLP's fixed64 nanoseconds (0 for the zero time).
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// keyValue writes common.v1.KeyValue holding a string AnyValue. The value
// is written even when empty: an empty string is a value.
func keyValue(kv Attr) func([]byte) []byte {
	return func(b []byte) []byte {
		b = stringField(b, 1, kv.Key)
		return message(b, 2, func(b []byte) []byte {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			return protowire.AppendString(b, kv.Value)
		})
	}
}

// exportRequest writes the body both export requests share: field 1 holds
// one message for the resource (ResourceLogs, ResourceSpans) with the
// resource (1) and one message for hostd's scope (2: ScopeLogs,
// ScopeSpans), which holds the scope (1) and the items (2), in their order.
func exportRequest[T any](resource []Attr, items []T, item func(T) func([]byte) []byte) []byte {
	return message(nil, 1, func(b []byte) []byte {
		b = message(b, 1, func(b []byte) []byte { // resource.v1.Resource
			for _, kv := range resource {
				b = message(b, 1, keyValue(kv))
			}
			return b
		})
		return message(b, 2, func(b []byte) []byte {
			b = message(b, 1, func(b []byte) []byte { return stringField(b, 1, scope) }) // InstrumentationScope
			for _, it := range items {
				b = message(b, 2, item(it))
			}
			return b
		})
	})
}

// logsRequest is an ExportLogsServiceRequest.
func logsRequest(resource []Attr, records []logRecord) []byte {
	return exportRequest(resource, records, logRecordMsg)
}

// severityInfo is OTLP's SEVERITY_NUMBER_INFO.
const severityInfo = 9

// logRecordMsg writes logs.v1.LogRecord.
func logRecordMsg(r logRecord) func([]byte) []byte {
	return func(b []byte) []byte {
		b = fixed64Field(b, 1, unixNano(r.time))
		b = varintField(b, 2, severityInfo)
		b = message(b, 5, func(b []byte) []byte { // the body, a string AnyValue
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			return protowire.AppendString(b, r.body)
		})
		for _, kv := range r.attrs {
			b = message(b, 6, keyValue(kv))
		}
		b = varintField(b, 7, uint64(r.dropped))
		if r.traceID != ([16]byte{}) {
			if r.sampled {
				b = fixed32Field(b, 8, sampled)
			}
			b = bytesField(b, 9, r.traceID[:])
			b = bytesField(b, 10, r.spanID[:])
		}
		b = fixed64Field(b, 11, unixNano(r.observed))
		return stringField(b, 12, r.eventName)
	}
}

// sampled is the W3C trace flags of every span hostd sends.
const sampled = 1

// spanKindInternal is OTLP's SPAN_KIND_INTERNAL.
const spanKindInternal = 1

// tracesRequest is an ExportTraceServiceRequest.
func tracesRequest(resource []Attr, spans []spanData) []byte {
	return exportRequest(resource, spans, spanMsg)
}

// spanMsg writes trace.v1.Span.
func spanMsg(s spanData) func([]byte) []byte {
	return func(b []byte) []byte {
		b = bytesField(b, 1, s.traceID[:])
		b = bytesField(b, 2, s.spanID[:])
		if s.parentID != ([8]byte{}) {
			b = bytesField(b, 4, s.parentID[:])
		}
		b = stringField(b, 5, s.name)
		b = varintField(b, 6, spanKindInternal)
		b = fixed64Field(b, 7, unixNano(s.start))
		b = fixed64Field(b, 8, unixNano(s.end))
		for _, kv := range s.attrs {
			b = message(b, 9, keyValue(kv))
		}
		b = varintField(b, 10, uint64(s.dropped))
		return fixed32Field(b, 16, sampled)
	}
}
