package hostd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// answerText answers every call with text.
func answerText(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(exthost.ToolAnswer{Content: []exthost.Content{{Type: "text", Text: text}},
			Details: map[string]any{"rows": 9000}})
	}
}

func limitedRegistry(url string, out *contract.ToolOutput) contract.Registry {
	reg := runnableRegistry(url, 5)
	reg.Tools[1].Output = out
	return reg
}

// R-TL-2: an answer over the limit reaches the agent cut at the limit (on a
// character boundary) with a marker naming where the whole answer is, and
// the whole answer is served there.
func TestToolOutput_TruncatesOverTheLimitAndKeepsTheWholeAnswer(t *testing.T) {
	whole := strings.Repeat("é", 3000) // 6000 bytes, two per character
	svc := newToolService(t, answerText(whole))
	_, ts, _ := newTestServer(t, limitedRegistry(svc.URL, &contract.ToolOutput{MaxBytes: 301, OnOverflow: contract.OverflowTruncate}))
	code, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "x"}})
	if code != 200 || !resp.Executed || resp.Result.IsError || len(resp.Result.Content) != 2 {
		t.Fatalf("truncated call: %d %+v", code, resp)
	}
	kept := resp.Result.Content[0].Text
	if len(kept) != 300 || !utf8.ValidString(kept) || !strings.HasPrefix(whole, kept) {
		t.Fatalf("kept %d bytes (valid UTF-8: %v), want the first 300 bytes", len(kept), utf8.ValidString(kept))
	}
	marker := resp.Result.Content[1].Text
	if !strings.Contains(marker, "[output truncated by Loadout: 300 of 6013 bytes shown") || !strings.Contains(marker, "GET /v1/results/") {
		t.Fatalf("marker = %q", marker)
	}
	d, _ := resp.Result.Details[TruncatedDetailsKey].(map[string]any)
	path, _ := d["result"].(string)
	if d == nil || d["totalBytes"] != float64(6013) || !strings.HasPrefix(path, "/v1/results/") || !strings.Contains(marker, path) {
		t.Fatalf("details = %+v", resp.Result.Details)
	}
	if _, found := resp.Result.Details["rows"]; found {
		t.Fatal("a truncated answer kept the tool's details")
	}
	code, body := testnet.Get(t, ts.URL+path+"?call=t-1")
	var full exthost.ToolResult
	if err := json.Unmarshal([]byte(body), &full); err != nil || code != 200 || full.Content[0].Text != whole || full.ToolCallID != "t-1" {
		t.Fatalf("GET %s: %d %v, want the whole answer", path, code, err)
	}
	if code, _ := testnet.Get(t, ts.URL+"/v1/results/0123"); code != http.StatusNotFound {
		t.Fatalf("an unknown result: %d, want 404", code)
	}
}

// R-TL-2: Refuse answers an error naming the limit; the answer is not kept.
func TestToolOutput_RefuseAnswersAnErrorNamingTheLimit(t *testing.T) {
	svc := newToolService(t, answerText(strings.Repeat("a", 5000)))
	s, ts, _ := newTestServer(t, limitedRegistry(svc.URL, &contract.ToolOutput{MaxBytes: 1024, OnOverflow: contract.OverflowRefuse}))
	_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "x"}})
	if !resp.Result.IsError || len(resp.Result.Content) != 1 || len(resp.Result.Details) != 0 ||
		resp.Result.Content[0].Text != `tool "review_note" answered 5013 bytes, over its output limit of 1024 bytes (output.onOverflow: Refuse): the answer was dropped` {
		t.Fatalf("refused answer: %+v", resp.Result)
	}
	if s.kept.Len() != 0 {
		t.Fatal("a refused answer was kept")
	}
}

func TestToolOutput_WithinTheLimitIsUntouched(t *testing.T) {
	svc := newToolService(t, answerText("short"))
	_, ts, _ := newTestServer(t, limitedRegistry(svc.URL, &contract.ToolOutput{MaxBytes: 256, OnOverflow: contract.OverflowTruncate}))
	_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "t-1", "arguments": map[string]any{"text": "x"}})
	if resp.Result.IsError || len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != "short" || resp.Result.Details["rows"] != float64(9000) {
		t.Fatalf("answer within the limit: %+v", resp.Result)
	}
}

// concurrencyProbe is a tool Service that records how many calls it ran at
// once: each call waits until a second one arrives or a moment passes.
type concurrencyProbe struct {
	inFlight, maxInFlight atomic.Int32
	second                chan struct{}
	once                  sync.Once
}

func (p *concurrencyProbe) handle(w http.ResponseWriter, _ *http.Request) {
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	for {
		m := p.maxInFlight.Load()
		if n <= m || p.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if n >= 2 {
		p.once.Do(func() { close(p.second) })
	}
	select {
	case <-p.second:
	case <-time.After(200 * time.Millisecond):
	}
	recordNote(w, nil)
}

func runConcurrently(t *testing.T, mode string) int32 {
	t.Helper()
	probe := &concurrencyProbe{second: make(chan struct{})}
	svc := newToolService(t, probe.handle)
	reg := runnableRegistry(svc.URL, 10)
	reg.Tools[1].ExecutionMode = mode
	_, ts, _ := newTestServer(t, reg)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": fmt.Sprint(i), "arguments": map[string]any{"text": "x"}})
			if resp.Result.IsError {
				t.Errorf("call %d: %+v", i, resp.Result)
			}
		})
	}
	wg.Wait()
	if svc.calls.Load() != 4 {
		t.Fatalf("%d calls reached the Service, want 4", svc.calls.Load())
	}
	return probe.maxInFlight.Load()
}

// R-TL-3: a serial tool never runs twice at once through hostd; a parallel
// one does (the probe can see overlap).
func TestSerialTool_NeverRunsTwiceAtOnce(t *testing.T) {
	if got := runConcurrently(t, contract.ExecutionSerial); got != 1 {
		t.Fatalf("a serial tool ran %d calls at once", got)
	}
	if got := runConcurrently(t, ""); got < 2 {
		t.Fatalf("a parallel tool ran at most %d call at once: the probe cannot see overlap", got)
	}
}

// R-TL-3: the queue of a serial tool is bounded: with one call running and
// maxSerialWaiting waiting, the next is refused at once, naming why, and
// never reaches the Service.
func TestSerialTool_QueueIsBounded(t *testing.T) {
	release := make(chan struct{})
	svc := newToolService(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		recordNote(w, r)
	})
	reg := runnableRegistry(svc.URL, 30)
	reg.Tools[1].ExecutionMode = contract.ExecutionSerial
	s, ts, _ := newTestServer(t, reg)
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the servers close, whatever happens
	var wg sync.WaitGroup
	for i := range maxSerialWaiting + 1 {
		wg.Go(func() {
			runTool(t, ts.URL, "review_note", map[string]any{"id": fmt.Sprint(i), "arguments": map[string]any{"text": "x"}})
		})
	}
	waitFor(t, func() bool {
		s.serial.mu.Lock()
		defer s.serial.mu.Unlock()
		g := s.serial.gates["review_note"]
		return g != nil && g.waiting == maxSerialWaiting
	})
	_, resp, _ := runTool(t, ts.URL, "review_note", map[string]any{"id": "over", "arguments": map[string]any{"text": "x"}})
	if !resp.Result.IsError || resp.Executed || !strings.Contains(resp.Result.Content[0].Text, "runs one call at a time and 8 calls already wait for it") {
		t.Fatalf("the call over the queue bound: %+v", resp)
	}
	letGo()
	wg.Wait()
	if svc.calls.Load() != maxSerialWaiting+1 {
		t.Fatalf("%d calls reached the Service, want %d", svc.calls.Load(), maxSerialWaiting+1)
	}
}

// R-TL-4: the registry and hostd's MCP tools carry the hints and the
// execution mode.
func TestToolTraits_InTheRegistryAndOnMCPTools(t *testing.T) {
	yes, no := true, false
	reg := runnableRegistry("http://127.0.0.1:1/", 5)
	reg.Tools[1].ToolTraits = contract.ToolTraits{Destructive: &yes, Idempotent: true, OpenWorld: &no, ExecutionMode: contract.ExecutionSerial,
		Output: &contract.ToolOutput{MaxBytes: 4096, OnOverflow: contract.OverflowTruncate}}
	_, ts, _ := newTestServer(t, reg)
	_, body := testnet.Get(t, ts.URL+"/v1/registry")
	if !strings.Contains(body, `"destructive":true,"idempotent":true,"openWorld":false,"output":{"maxBytes":4096,"onOverflow":"truncate"},"executionMode":"serial"`) {
		t.Fatalf("/v1/registry = %s", body)
	}
	tool := mcpTool(reg.Tools[1])
	a := tool.Annotations
	if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint ||
		tool.Meta[ExecutionModeMetaKey] != contract.ExecutionSerial {
		t.Fatalf("MCP tool = %+v %+v", tool, a)
	}
	if plain := mcpTool(fixedRegistry().Tools[1]); plain.Annotations != nil || plain.Meta != nil {
		t.Fatalf("a tool without hints got %+v %+v", plain.Annotations, plain.Meta)
	}
}
