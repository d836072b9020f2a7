package ledgerexport

import (
	"encoding/binary"
	"os"
	"strconv"
	"time"
)

// The SDK environment variables hostd honours besides the exporter's
// (otlphttp.go), with the SDK's defaults and its way with a value that does
// not parse: the default is used.

// batchSettings are a batch processor's OTEL_BLRP_* (logs) or OTEL_BSP_*
// (spans) settings.
type batchSettings struct {
	queue, batch int
	delay        time.Duration
	timeout      time.Duration
}

func batchFromEnv(prefix string, delay time.Duration) batchSettings {
	s := batchSettings{queue: envInt(prefix+"MAX_QUEUE_SIZE", 2048), batch: envInt(prefix+"MAX_EXPORT_BATCH_SIZE", 512),
		delay:   time.Duration(envInt(prefix+"SCHEDULE_DELAY", int(delay/time.Millisecond))) * time.Millisecond,
		timeout: time.Duration(envInt(prefix+"EXPORT_TIMEOUT", 30000)) * time.Millisecond}
	// As the SDK: a batch is never larger than the queue.
	s.batch = min(s.batch, s.queue)
	return s
}

// envInt is a positive integer variable, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// attrLimits are the attribute limits of a log record or a span: at most
// count attributes (the rest dropped and counted), each value at most
// length bytes (0: unlimited).
type attrLimits struct{ count, length int }

// limitsFromEnv reads OTEL_<KIND>_ATTRIBUTE_{COUNT,VALUE_LENGTH}_LIMIT, then
// the general OTEL_ATTRIBUTE_* ones; the SDK's default count is 128.
func limitsFromEnv(kind string) attrLimits {
	get := func(what string, def int) int {
		if n, err := strconv.Atoi(os.Getenv("OTEL_" + kind + "_ATTRIBUTE_" + what + "_LIMIT")); err == nil && n >= 0 {
			return n
		}
		if n, err := strconv.Atoi(os.Getenv("OTEL_ATTRIBUTE_" + what + "_LIMIT")); err == nil && n >= 0 {
			return n
		}
		return def
	}
	return attrLimits{count: get("COUNT", 128), length: get("VALUE_LENGTH", 0)}
}

// apply cuts attrs to the limits, returning what is kept and how many
// were dropped.
func (l attrLimits) apply(attrs []Attr) ([]Attr, int) {
	dropped := 0
	if len(attrs) > l.count {
		attrs, dropped = attrs[:l.count], len(attrs)-l.count
	}
	if l.length > 0 {
		for i := range attrs {
			if len(attrs[i].Value) > l.length {
				attrs[i].Value = attrs[i].Value[:l.length]
			}
		}
	}
	return attrs, dropped
}

// sampler decides by trace id whether a call's span is exported, as
// OTEL_TRACES_SAMPLER says: always_on and parentbased_always_on (the
// default) sample everything, always_off and parentbased_always_off
// nothing, traceidratio and parentbased_traceidratio the ratio
// OTEL_TRACES_SAMPLER_ARG (default 1) of trace ids, as the SDK reads them.
// A call's span is a root, so "parent based" decides as its root sampler.
type sampler func(traceID [16]byte) bool

func samplerFromEnv() sampler {
	switch os.Getenv("OTEL_TRACES_SAMPLER") {
	case "always_off", "parentbased_always_off":
		return func([16]byte) bool { return false }
	case "traceidratio", "parentbased_traceidratio":
		ratio := 1.0
		if r, err := strconv.ParseFloat(os.Getenv("OTEL_TRACES_SAMPLER_ARG"), 64); err == nil && r >= 0 && r <= 1 {
			ratio = r
		}
		bound := uint64(ratio * (1 << 63))
		return func(id [16]byte) bool { return binary.BigEndian.Uint64(id[8:16])>>1 < bound }
	}
	return func([16]byte) bool { return true }
}
