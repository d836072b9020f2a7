// Package managerlog builds the manager's logger: controller-runtime's zap
// logger as its --zap-* flags configure it, sampled as controller-runtime
// samples it in production, with counters sized for a manager.
//
// controller-runtime wraps its production logger in zap's sampler, whose
// table of 7 levels × 4,096 counters (28,672, 448 KiB) is allocated when the
// logger is built and held for the life of the process: the largest single
// thing an idle shard of the manager pays for (docs/benchmarks.md, issue
// 45). A manager logs a few dozen distinct messages, so 128 counters a level
// keep the same rule at 14 KiB: per level and message, each second, the
// first 100 are written, then every 100th. Two messages sharing a counter
// share its budget, as they do in zap's table.
package managerlog

import (
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The sampling of controller-runtime's production logger.
const (
	tick       = time.Second
	first      = 100
	thereafter = 100
)

// countersPerLevel is the table's width; a power of two.
const countersPerLevel = 128

// New returns the logger o describes. In production mode (the default)
// every message passes the compact sampler; in development mode, or when
// the level enables zap's level -2 (--zap-log-level=2 and finer), nothing is
// sampled, as with controller-runtime's own.
func New(o crzap.Options) logr.Logger {
	level := o.Level
	if level == nil {
		level = zap.NewAtomicLevelAt(zap.InfoLevel)
	}
	if o.Development || level.Enabled(zapcore.Level(-2)) {
		return crzap.New(crzap.UseFlagOptions(&o))
	}
	// controller-runtime installs zap's sampler unless the level enables
	// -2; a level that claims -2 turns that off, and the sampler below
	// applies the real level before anything is written.
	o.Level = claimsVerbose{level}
	counts := new(counters)
	o.ZapOpts = append(o.ZapOpts, zap.WrapCore(func(core zapcore.Core) zapcore.Core {
		return &sampler{Core: core, level: level, counts: counts}
	}))
	return crzap.New(crzap.UseFlagOptions(&o))
}

// claimsVerbose reports level -2 enabled besides what its level enables.
type claimsVerbose struct{ zapcore.LevelEnabler }

func (c claimsVerbose) Enabled(l zapcore.Level) bool {
	return l == zapcore.Level(-2) || c.LevelEnabler.Enabled(l)
}

// numLevels spans zap's levels from Debug to Fatal; finer levels are never
// sampled (they are off whenever the sampler is on).
const numLevels = int(zapcore.FatalLevel-zapcore.DebugLevel) + 1

type counter struct {
	resetAt atomic.Int64
	n       atomic.Uint64
}

type counters [numLevels][countersPerLevel]counter

// inc counts one entry in the current tick and returns the count.
func (c *counter) inc(t time.Time) uint64 {
	now := t.UnixNano()
	resetAt := c.resetAt.Load()
	if resetAt > now {
		return c.n.Add(1)
	}
	c.n.Store(1)
	if !c.resetAt.CompareAndSwap(resetAt, now+tick.Nanoseconds()) {
		// Another goroutine reset it first and counted itself.
		return c.n.Add(1)
	}
	return 1
}

// sampler is a zapcore.Core that drops what the sampling rule drops and
// what level does not enable.
type sampler struct {
	zapcore.Core
	level  zapcore.LevelEnabler
	counts *counters
}

func (s *sampler) Enabled(l zapcore.Level) bool { return s.level.Enabled(l) }

// Level is the real level, for zapcore.LevelOf.
func (s *sampler) Level() zapcore.Level { return zapcore.LevelOf(s.level) }

// With adds fields lazily: controller-runtime gives every reconcile a logger
// with its controller, object and reconcile ID, and zap encodes those at
// once: 1.8 to 3.5 KB a reconcile that logs nothing (docs/benchmarks.md).
// They are encoded when a message first passes the sampler. The fields
// controller-runtime adds are values, not references to objects that change.
func (s *sampler) With(fields []zapcore.Field) zapcore.Core {
	return &sampler{Core: zapcore.NewLazyWith(s.Core, fields), level: s.level, counts: s.counts}
}

func (s *sampler) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !s.level.Enabled(ent.Level) {
		return ce
	}
	if i := int(ent.Level - zapcore.DebugLevel); i >= 0 && i < numLevels {
		n := s.counts[i][fnv32a(ent.Message)%countersPerLevel].inc(ent.Time)
		if n > first && (n-first)%thereafter != 0 {
			return ce
		}
	}
	return s.Core.Check(ent, ce)
}

// fnv32a is FNV-1a of s, without hash.Hash's allocation per entry.
func fnv32a(s string) uint32 {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= prime
	}
	return h
}
