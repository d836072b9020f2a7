package hostd

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// Nothing silent (docs/agents.md): a hook that fails on every call is logged once
// per hook and context, and every failure is counted in
// loadout_hostd_hook_failures_total; a new context logs it again.
func TestHookFailures_LoggedOncePerHookAndContextAndCounted(t *testing.T) {
	reg := fixedRegistry()
	reg.Hooks[1].CEL.Expression = "result.details.missing == 'x'" // the after hook errors on every call
	var logs testenv.SyncBuffer                                   // the server's goroutines write it concurrently
	s, ts, dir := serveContext(t, contextData(t, reg), Options{Now: func() time.Time { return time.UnixMilli(42) }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	after := map[string]any{"call": map[string]any{"id": "a-1", "name": "review_note"},
		"result": map[string]any{"toolCallId": "a-1", "toolName": "review_note", "content": []any{map[string]any{"type": "text", "text": "ok"}}}}
	for range 3 {
		var resp AfterResponse
		if post(t, ts.URL+"/v1/after", after, &resp); len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Kind != "error" {
			t.Fatalf("after: %+v", resp)
		}
	}
	if n := strings.Count(logs.String(), "Hook failed"); n != 1 {
		t.Fatalf("%d log lines for 3 failures of one hook, want 1:\n%s", n, logs.String())
	}
	for _, want := range []string{"extension=review-extension", "hook=observe", "kind=error", "hash=sha256:"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log line lacks %s:\n%s", want, logs.String())
		}
	}
	if metrics := get(t, ts.URL+"/metrics"); !strings.Contains(metrics, `loadout_hostd_hook_failures_total{kind="error"} 3`) {
		t.Fatalf("failures not counted:\n%s", grepLines(metrics, "loadout_hostd_hook"))
	}
	// A new context (another hash) logs the failure once more.
	reg.PromptGuides[0].Text = "Use review_note, always."
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, reg))
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		post(t, ts.URL+"/v1/after", after, &AfterResponse{})
	}
	if n := strings.Count(logs.String(), "Hook failed"); n != 2 {
		t.Fatalf("%d log lines after a new context, want 2:\n%s", n, logs.String())
	}
}
