package ledgerexport

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
func unixNano(t interface{ UnixNano() int64 }, zero bool) uint64 {
	if zero {
		return 0
	}
	return uint64(t.UnixNano())
}

// resourceMsg writes opentelemetry.proto.resource.v1.Resource.
func resourceMsg(res *resource.Resource) func([]byte) []byte {
	return func(b []byte) []byte {
		if res == nil {
			return b
		}
		for _, kv := range res.Attributes() {
			b = message(b, 1, keyValue(kv))
		}
		return b
	}
}

// scopeMsg writes opentelemetry.proto.common.v1.InstrumentationScope.
func scopeMsg(s instrumentation.Scope) func([]byte) []byte {
	return func(b []byte) []byte {
		b = stringField(b, 1, s.Name)
		return stringField(b, 2, s.Version)
	}
}

// keyValue writes common.v1.KeyValue from an attribute.
func keyValue(kv attribute.KeyValue) func([]byte) []byte {
	return func(b []byte) []byte {
		b = stringField(b, 1, string(kv.Key))
		return message(b, 2, attributeValue(kv.Value))
	}
}

// attributeValue writes common.v1.AnyValue from an attribute's value.
func attributeValue(v attribute.Value) func([]byte) []byte {
	return func(b []byte) []byte {
		switch v.Type() {
		case attribute.BOOL:
			return boolValue(b, v.AsBool())
		case attribute.INT64:
			return intValue(b, v.AsInt64())
		case attribute.FLOAT64:
			return doubleValue(b, v.AsFloat64())
		case attribute.STRINGSLICE:
			return message(b, 5, func(b []byte) []byte {
				for _, s := range v.AsStringSlice() {
					b = message(b, 1, func(b []byte) []byte { return stringValue(b, s) })
				}
				return b
			})
		default:
			return stringValue(b, v.String())
		}
	}
}

// logValue writes common.v1.AnyValue from a log value.
func logValue(v otellog.Value) func([]byte) []byte {
	return func(b []byte) []byte {
		switch v.Kind() {
		case otellog.KindBool:
			return boolValue(b, v.AsBool())
		case otellog.KindInt64:
			return intValue(b, v.AsInt64())
		case otellog.KindFloat64:
			return doubleValue(b, v.AsFloat64())
		case otellog.KindBytes:
			b = protowire.AppendTag(b, 7, protowire.BytesType)
			return protowire.AppendBytes(b, v.AsBytes())
		case otellog.KindSlice:
			return message(b, 5, func(b []byte) []byte {
				for _, e := range v.AsSlice() {
					b = message(b, 1, logValue(e))
				}
				return b
			})
		case otellog.KindMap:
			return message(b, 6, func(b []byte) []byte {
				for _, kv := range v.AsMap() {
					b = message(b, 1, logKeyValue(kv))
				}
				return b
			})
		case otellog.KindEmpty:
			return b
		default:
			return stringValue(b, v.AsString())
		}
	}
}

func logKeyValue(kv otellog.KeyValue) func([]byte) []byte {
	return func(b []byte) []byte {
		b = stringField(b, 1, kv.Key)
		return message(b, 2, logValue(kv.Value))
	}
}

// The AnyValue oneof members are written even when zero: an empty string
// or a false is a value.
func stringValue(b []byte, s string) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func boolValue(b []byte, v bool) []byte {
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(v))
}

func intValue(b []byte, v int64) []byte {
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func doubleValue(b []byte, v float64) []byte {
	b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// logsRequest is an ExportLogsServiceRequest: one ResourceLogs per
// resource, one ScopeLogs per scope, in the records' order.
func logsRequest(records []sdklog.Record) []byte {
	return exportRequest(records, func(r sdklog.Record) (*resource.Resource, instrumentation.Scope) {
		return r.Resource(), r.InstrumentationScope()
	}, logRecord)
}

// logRecord writes logs.v1.LogRecord.
func logRecord(r sdklog.Record) func([]byte) []byte {
	return func(b []byte) []byte {
		b = fixed64Field(b, 1, unixNano(r.Timestamp(), r.Timestamp().IsZero()))
		b = varintField(b, 2, uint64(r.Severity()))
		b = stringField(b, 3, r.SeverityText())
		if body := r.Body(); body.Kind() != otellog.KindEmpty {
			b = message(b, 5, logValue(body))
		}
		r.WalkAttributes(func(kv otellog.KeyValue) bool {
			b = message(b, 6, logKeyValue(kv))
			return true
		})
		b = varintField(b, 7, uint64(r.DroppedAttributes()))
		b = fixed32Field(b, 8, uint32(r.TraceFlags()))
		if tid := r.TraceID(); tid.IsValid() {
			b = bytesField(b, 9, tid[:])
		}
		if sid := r.SpanID(); sid.IsValid() {
			b = bytesField(b, 10, sid[:])
		}
		b = fixed64Field(b, 11, unixNano(r.ObservedTimestamp(), r.ObservedTimestamp().IsZero()))
		return stringField(b, 12, r.EventName())
	}
}

// tracesRequest is an ExportTraceServiceRequest, shaped as logsRequest.
func tracesRequest(spans []sdktrace.ReadOnlySpan) []byte {
	return exportRequest(spans, func(s sdktrace.ReadOnlySpan) (*resource.Resource, instrumentation.Scope) {
		return s.Resource(), s.InstrumentationScope()
	}, span)
}

// exportRequest writes the body both export requests share: field 1 holds
// one message per resource (ResourceLogs, ResourceSpans), each with the
// resource (1) and one message per scope (2: ScopeLogs, ScopeSpans), each
// with the scope (1) and its items (2), in the items' order.
func exportRequest[T any](items []T, key func(T) (*resource.Resource, instrumentation.Scope), item func(T) func([]byte) []byte) []byte {
	var b []byte
	for _, group := range groupBy(items, key) {
		b = message(b, 1, func(b []byte) []byte {
			b = message(b, 1, resourceMsg(group.res))
			return message(b, 2, func(b []byte) []byte {
				b = message(b, 1, scopeMsg(group.scope))
				for _, it := range group.items {
					b = message(b, 2, item(it))
				}
				return b
			})
		})
	}
	return b
}

// span writes trace.v1.Span.
func span(s sdktrace.ReadOnlySpan) func([]byte) []byte {
	return func(b []byte) []byte {
		sc := s.SpanContext()
		tid, sid := sc.TraceID(), sc.SpanID()
		b = bytesField(b, 1, tid[:])
		b = bytesField(b, 2, sid[:])
		b = stringField(b, 3, sc.TraceState().String())
		if p := s.Parent(); p.SpanID().IsValid() {
			psid := p.SpanID()
			b = bytesField(b, 4, psid[:])
		}
		b = stringField(b, 5, s.Name())
		// The API's span kinds and OTLP's share their numbers.
		b = varintField(b, 6, uint64(s.SpanKind()))
		b = fixed64Field(b, 7, unixNano(s.StartTime(), s.StartTime().IsZero()))
		b = fixed64Field(b, 8, unixNano(s.EndTime(), s.EndTime().IsZero()))
		for _, kv := range s.Attributes() {
			b = message(b, 9, keyValue(kv))
		}
		b = varintField(b, 10, uint64(s.DroppedAttributes()))
		for _, e := range s.Events() {
			b = message(b, 11, func(b []byte) []byte { // Span.Event
				b = fixed64Field(b, 1, unixNano(e.Time, e.Time.IsZero()))
				b = stringField(b, 2, e.Name)
				for _, kv := range e.Attributes {
					b = message(b, 3, keyValue(kv))
				}
				return b
			})
		}
		if st := s.Status(); st.Code != 0 || st.Description != "" {
			b = message(b, 15, func(b []byte) []byte { // Status
				b = stringField(b, 2, st.Description)
				// The API's codes are Unset 0, Error 1, Ok 2; OTLP's are
				// Unset 0, Ok 1, Error 2.
				code := map[uint32]uint64{0: 0, 1: 2, 2: 1}[uint32(st.Code)]
				return varintField(b, 3, code)
			})
		}
		return fixed32Field(b, 16, uint32(sc.TraceFlags()))
	}
}

// group is the items of one resource and scope, in their order.
type group[T any] struct {
	res   *resource.Resource
	scope instrumentation.Scope
	items []T
}

// groupBy groups items by resource and scope, keeping the order in which
// each first appears and the items' order within a group.
func groupBy[T any](items []T, key func(T) (*resource.Resource, instrumentation.Scope)) []*group[T] {
	var groups []*group[T]
	for _, it := range items {
		res, scope := key(it)
		var g *group[T]
		for _, have := range groups {
			if have.res == res && have.scope == scope {
				g = have
				break
			}
		}
		if g == nil {
			g = &group[T]{res: res, scope: scope}
			groups = append(groups, g)
		}
		g.items = append(g.items, it)
	}
	return groups
}
