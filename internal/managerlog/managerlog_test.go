package managerlog

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func lines(b *bytes.Buffer, msg string) int { return strings.Count(b.String(), `"msg":"`+msg+`"`) }

// The manager's production logger samples as controller-runtime's does:
// per level and message, within a second, the first 100 entries and then
// every 100th are written; another message has its own budget; a message
// below the level is never written.
func TestNew_SamplesAsControllerRuntimesProductionLogger(t *testing.T) {
	var out bytes.Buffer
	log := New(crzap.Options{DestWriter: &out})
	for range 250 {
		log.Info("flood")
		log.Error(nil, "flood")
	}
	log.Info("other")
	log.V(1).Info("debug")
	log.V(2).Info("finer")
	// 1–100 and the 200th; within one second (the loop takes microseconds).
	if got := lines(&out, "flood"); got != 2*101 {
		t.Errorf("%d flood lines (info and error), want 2×101", got)
	}
	if lines(&out, "other") != 1 || lines(&out, "debug") != 0 || lines(&out, "finer") != 0 {
		t.Errorf("want other once, debug and finer never at the info level:\n%s", out.String())
	}
	if log.V(1).Enabled() || log.V(2).Enabled() {
		t.Error("V(1) or V(2) enabled at the info level")
	}
}

// With --zap-log-level=debug the sampler still applies; a level finer than
// -1 turns sampling off, as controller-runtime does, and writes it all.
func TestNew_DebugIsSampledFinerLevelsAreNot(t *testing.T) {
	var out bytes.Buffer
	debug := zap.NewAtomicLevelAt(zapcore.DebugLevel)
	log := New(crzap.Options{DestWriter: &out, Level: &debug})
	for range 150 {
		log.V(1).Info("d")
	}
	if got := lines(&out, "d"); got != 100 {
		t.Errorf("debug: %d lines, want 100", got)
	}
	out.Reset()
	finer := zap.NewAtomicLevelAt(zapcore.Level(-3))
	log = New(crzap.Options{DestWriter: &out, Level: &finer})
	for range 150 {
		log.V(3).Info("d")
	}
	if got := lines(&out, "d"); got != 150 {
		t.Errorf("level -3: %d lines, want all 150", got)
	}
}

// What an idle manager pays for its logger (docs/benchmarks.md, Shards): building it keeps
// far less than zap's sampler table, 448 KiB, which controller-runtime's
// logger holds; this fails if that table comes back.
func TestNew_KeepsNoSamplerTable(t *testing.T) {
	var out bytes.Buffer
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const n = 8
	loggers := make([]any, n)
	before := heap()
	for i := range loggers {
		loggers[i] = New(crzap.Options{DestWriter: &out})
	}
	ours := (heap() - before) / n
	before = heap()
	for i := range loggers {
		loggers[i] = crzap.New(crzap.WriteTo(&out))
	}
	theirs := (heap() - before) / n
	runtime.KeepAlive(loggers)
	if ours > 64<<10 || theirs < 400<<10 {
		t.Errorf("a logger holds %d B, controller-runtime's %d B: want under 64 KiB against its sampler's 448 KiB", ours, theirs)
	}
}

// A reconcile's logger (controller-runtime adds its controller, object and
// reconcile ID) costs no encoding until it logs; what it logs still
// carries every value, each logger its own.
func TestNew_ValuesAreEncodedWhenALineIsWritten(t *testing.T) {
	var out bytes.Buffer
	log := New(crzap.Options{DestWriter: &out})
	a := log.WithValues("controller", "workspace", "Workspace", map[string]string{"name": "dev", "namespace": "team-a"}, "reconcileID", "a1")
	b := log.WithValues("reconcileID", "b2")
	a.Info("applied")
	b.Error(nil, "failed")
	if got := out.String(); !strings.Contains(got, `"msg":"applied","controller":"workspace","Workspace":{"name":"dev","namespace":"team-a"},"reconcileID":"a1"`) ||
		!strings.Contains(got, `"msg":"failed","reconcileID":"b2"`) || strings.Count(got, "reconcileID") != 2 {
		t.Errorf("lines lost or mixed their values:\n%s", got)
	}

	var written bytes.Buffer
	quiet := New(crzap.Options{DestWriter: &written})
	bytesPerLogger := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range 1000 {
			quiet.WithValues("controller", "workspace", "namespace", "team-a", "name", "dev", "reconcileID", i).V(1).Info("not written")
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 1000
	}
	// zap's eager With cloned the encoder and its buffer: 1.8 KB here.
	if got := bytesPerLogger(); got > 1024 || written.Len() != 0 {
		t.Errorf("a reconcile's logger that writes nothing allocates %d bytes (want under 1 KiB); written %q", got, written.String())
	}
}
