package ledger

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
)

func writeN(t *testing.T, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := 0; i < n; i++ {
		w.Write(&Record{Time: "2026-12-03T06:00:00Z", Surface: "before", Event: "BeforeToolCall", Tool: "bash", Verdict: "allowed",
			ArgumentsDigest: Digest(map[string]any{"command": "ls"}), ArgumentsDigestAfter: Digest(map[string]any{"command": "ls"})})
	}
	return strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

func verify(t *testing.T, lines []string) (Summary, *Break) {
	t.Helper()
	s, b, err := Verify(strings.NewReader(strings.Join(lines, "")))
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

func TestLedger_WholeVerifiesAndSkipsOtherLines(t *testing.T) {
	lines := writeN(t, 4)
	mixed := append([]string{`{"level":"INFO","msg":"loaded"}` + "\n"}, lines[:2]...)
	mixed = append(mixed, "plain text\n")
	mixed = append(mixed, lines[2:]...)
	s, b := verify(t, mixed)
	if b != nil {
		t.Fatalf("break in a whole ledger: %v", b)
	}
	if s.Records != 4 || s.Skipped != 2 || len(s.Chains) != 1 {
		t.Fatalf("summary %+v", s)
	}
	if strings.Contains(strings.Join(lines, ""), `"ls"`) {
		t.Fatal("arguments are in the record")
	}
}

func TestLedger_BreaksAreNamed(t *testing.T) {
	lines := writeN(t, 5)
	cases := map[string]struct {
		edit       func([]string) []string
		line, kind string
	}{
		"deleted": {func(l []string) []string { return append(append([]string{}, l[:2]...), l[3:]...) }, "line 3", "gap"},
		"edited": {func(l []string) []string {
			out := append([]string{}, l...)
			out[1] = strings.Replace(out[1], `"verdict":"allowed"`, `"verdict":"blocked"`, 1)
			return out
		}, "line 2", "edited"},
		"reordered": {func(l []string) []string {
			out := append([]string{}, l...)
			out[2], out[3] = out[3], out[2]
			return out
		}, "line 3", "reorder"},
		"first deleted": {func(l []string) []string { return l[1:] }, "line 1", "gap"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, b := verify(t, c.edit(lines))
			if b == nil {
				t.Fatal("no break found")
			}
			if !strings.HasPrefix(b.Error(), c.line+" ") || b.Kind != c.kind {
				t.Fatalf("break %v, want %s %s", b, c.line, c.kind)
			}
		})
	}
	// A record repeated is a reorder too.
	out := []string{lines[0], lines[1], lines[2], lines[1]}
	if _, b := verify(t, out); b == nil || b.Kind != "reorder" || b.Line != 4 {
		t.Fatalf("break %v", b)
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLedger_WriteFailureIsCountedNotReturned(t *testing.T) {
	var got []error
	w := NewWriter(failing{})
	w.OnError = func(err error) { got = append(got, err) }
	w.Write(&Record{Verdict: "allowed"})
	if w.Failed() != 1 || w.Written() != 0 || len(got) != 1 {
		t.Fatalf("failed %d written %d errors %v", w.Failed(), w.Written(), got)
	}
	var nilw *Writer
	nilw.Write(&Record{}) // a nil Writer writes nothing
}

func TestLedger_ConcurrentWritesChain(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				w.Write(&Record{Verdict: "allowed", Surface: "before"})
			}
		}()
	}
	wg.Wait()
	s, b, err := Verify(&buf)
	if err != nil || b != nil || s.Records != 400 {
		t.Fatalf("summary %+v break %v err %v", s, b, err)
	}
}

func BenchmarkLedgerWrite(b *testing.B) { benchmarkWrite(b, NewWriter(discard{})) }

// BenchmarkLedgerWriteAnchored is BenchmarkLedgerWrite with hostd's anchors:
// every 256th record also signs the head (Ed25519), and each record keeps
// its digest prefix for the next anchor.
func BenchmarkLedgerWriteAnchored(b *testing.B) {
	w := NewWriter(discard{})
	if err := w.EnableAnchors(DefaultAnchorEvery); err != nil {
		b.Fatal(err)
	}
	benchmarkWrite(b, w)
}

func benchmarkWrite(b *testing.B, w *Writer) {
	b.Helper()
	args := map[string]any{"command": "git status"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := Digest(args)
		w.Write(&Record{Time: "2026-12-03T06:00:00Z", Surface: "before", Event: "BeforeToolCall", Tool: "bash", Verdict: "allowed",
			ArgumentsDigest: d, ArgumentsDigestAfter: d, Context: "sha256:abc", Workspace: "team-a/dev"})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
