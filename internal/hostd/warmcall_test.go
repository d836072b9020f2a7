package hostd

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// denyAllBash is a context whose before hook blocks every bash call: a warm
// call answered "allowed" ran no hook.
func denyAllBash() contract.Registry {
	reg := fixedRegistry()
	reg.Deny = nil
	reg.Hooks = append(reg.Hooks, contract.Hook{Extension: "review-extension", Name: "no-bash", Event: contract.EventBeforeToolCall, Tools: []string{"bash"}, TimeoutSeconds: 10,
		CEL: &contract.CELHook{Expression: "false", Message: "no bash here"}})
	return reg
}

func warmBashCall(id string) map[string]any {
	return map[string]any{"acceptArguments": true, "call": map[string]any{"id": id, "name": "bash", "arguments": map[string]any{"command": "ls -la"}}}
}

// A warm call (the package's synthetic call before a session's first) runs
// no hook and leaves no ledger record, while a real call beside a stream of
// them is decided, recorded and answered as ever.
func TestWarmCall_NoHookNoLedgerRecord_RealCallBesideDecided(t *testing.T) {
	var sink testenv.SyncBuffer
	_, ts, _ := serveContext(t, contextData(t, denyAllBash()), Options{Now: func() time.Time { return time.UnixMilli(42) }, Ledger: ledger.NewWriter(&sink), Pod: "agent-0"})

	var raw map[string]any
	if code := post(t, ts.URL+WarmPath+"before", warmBashCall("w-1"), &raw); code != 200 || raw["allowed"] != true || raw["afterHooks"] != true {
		t.Fatalf("warm before: %d %v, want 200 allowed without running the hook", code, raw)
	}
	after := warmBashCall("w-1")
	after["result"] = map[string]any{"toolCallId": "w-1", "toolName": "bash", "isError": false, "content": []any{map[string]any{"type": "text", "text": "ok"}}}
	raw = nil
	if code := post(t, ts.URL+WarmPath+"after", after, &raw); code != 200 {
		t.Fatalf("warm after: %d %v", code, raw)
	}

	// Warm calls on four connections while real calls are made.
	const warmBody = `{"acceptArguments":true,"call":{"id":"w","name":"bash","arguments":{"command":"ls -la"}}}`
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Not post: it may t.Fatal, which only the test's goroutine may.
				resp, err := http.Post(ts.URL+WarmPath+"before", "application/json", strings.NewReader(warmBody))
				if err != nil {
					t.Error(err)
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("warm before under load: %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	for i := range 20 {
		var before BeforeResponse
		if code := post(t, ts.URL+"/v1/before", warmBashCall("r"), &before); code != 200 || before.Allowed || before.Result == nil || len(before.Result.Content) == 0 || before.Result.Content[0].Text != "no bash here" {
			t.Errorf("real call %d beside warm calls: %d %+v, want blocked by the hook", i, code, before)
		}
	}
	close(stop)
	wg.Wait()

	lines := strings.Split(strings.TrimSpace(sink.String()), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d ledger records, want one per real call (20), none per warm call:\n%s", len(lines), sink.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, `"verdict":"blocked"`) || !strings.Contains(l, `"callId":"r"`) {
			t.Errorf("record not the real call's: %s", l)
		}
	}
}

// A warm call is bounded: its body at most 16 KiB, a call it decodes as the
// real one is decoded (id and name required), and only before or after.
func TestWarmCall_BoundedAndChecked(t *testing.T) {
	_, ts, _ := newTestServer(t, denyAllBash())
	big := warmBashCall("w")
	big["call"].(map[string]any)["arguments"] = map[string]any{"command": strings.Repeat("x", maxWarmBodyBytes)}
	var raw map[string]any
	if code := post(t, ts.URL+WarmPath+"before", big, &raw); code != 413 {
		t.Errorf("a warm call over 16 KiB: %d %v, want 413", code, raw)
	}
	if code := post(t, ts.URL+WarmPath+"before", map[string]any{"call": map[string]any{"name": "bash"}}, &raw); code != 400 {
		t.Errorf("a warm call without an id: %d %v, want 400", code, raw)
	}
	if code := post(t, ts.URL+WarmPath+"after", warmBashCall("w"), &raw); code != 400 {
		t.Errorf("a warm after call without a result: %d %v, want 400", code, raw)
	}
	if code := post(t, ts.URL+WarmPath+"tools", warmBashCall("w"), &raw); code != 404 {
		t.Errorf("a warm call of another step: %d %v, want 404", code, raw)
	}
}

// A warm call's afterHooks is the real call's: the agent's warm calls take
// the path its real calls take (/v1/after or not).
func TestWarmCall_AfterHooksAsTheRealCall(t *testing.T) {
	for _, observed := range []bool{true, false} {
		reg := fixedRegistry()
		reg.Deny = nil
		if !observed {
			reg.Hooks = reg.Hooks[:1] // no AfterToolResult hook
		}
		_, ts, _ := newTestServer(t, reg)
		var warm, decided BeforeResponse
		if code := post(t, ts.URL+WarmPath+"before", warmBashCall("w"), &warm); code != 200 {
			t.Fatalf("warm before: %d", code)
		}
		if code := post(t, ts.URL+"/v1/before", warmBashCall("r"), &decided); code != 200 || !decided.Allowed {
			t.Fatalf("real before: %d %+v", code, decided)
		}
		if warm.AfterHooks != observed || decided.AfterHooks != observed {
			t.Errorf("observed %v: warm afterHooks %v, real %v", observed, warm.AfterHooks, decided.AfterHooks)
		}
	}
}
