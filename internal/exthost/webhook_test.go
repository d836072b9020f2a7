package exthost

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// webhookServer answers every review with handler and records the last one.
func webhookServer(t *testing.T, handler func(w http.ResponseWriter, review HookReview)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		var review HookReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			t.Errorf("webhook got an unreadable review: %v", err)
		}
		handler(w, review)
	})
	return srv, &hits
}

func webhookHost(t *testing.T, url string, event vocab.HookEvent, timeout time.Duration) *Host {
	t.Helper()
	h := newTestHost()
	mustLoad(t, h, factorySource("hooked", nil, hookFactory(Hook{Name: "remote", Event: event, Timeout: timeout,
		Handler: NewWebhook(outbound.Target{URL: url}, "hooked", "remote", nil)})))
	return h
}

func TestWebhook_AllowAndDeny(t *testing.T) {
	srv, _ := webhookServer(t, func(w http.ResponseWriter, review HookReview) {
		if review.Kind != HookReviewKind || review.Extension != "hooked" || review.Hook != "remote" || review.Workspace != testWorkspace {
			t.Errorf("review envelope %+v", review)
		}
		text, _ := review.Call.Arguments["text"].(string)
		_ = json.NewEncoder(w).Encode(map[string]any{"allowed": !strings.Contains(text, "SECRET"), "message": "remote says no"})
	})
	h := webhookHost(t, srv.URL, vocab.BeforeToolCall, time.Second)
	core := &coreCounter{}
	if r, d := h.Execute(context.Background(), call("1", "t", "fine"), core.run); r.IsError || len(d) != 0 {
		t.Fatalf("allowed call: %+v %+v", r, d)
	}
	c := call("2", "t", "SECRET")
	r, d := h.Execute(context.Background(), c, core.run)
	assertPaired(t, c, r)
	if r.Content[0].Text != "remote says no" || len(d) != 0 || core.calls.Load() != 1 {
		t.Fatalf("denied call: %+v %+v core %d", r, d, core.calls.Load())
	}
}

func TestWebhook_BrokenServersFailBeforeClosed_RHK3(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler func(http.ResponseWriter, HookReview)
		kind    DiagnosticKind
		message string
	}{
		{"500", func(w http.ResponseWriter, _ HookReview) { http.Error(w, "oops", 500) }, DiagnosticError, "500"},
		{"garbage", func(w http.ResponseWriter, _ HookReview) { _, _ = w.Write([]byte("<html>not json")) }, DiagnosticError, "unreadable"},
		{"no verdict", func(w http.ResponseWriter, _ HookReview) { _, _ = w.Write([]byte(`{"message":"hi"}`)) }, DiagnosticError, `no "allowed"`},
		{"slow", func(w http.ResponseWriter, _ HookReview) {
			time.Sleep(300 * time.Millisecond) // well past the 50ms timeout
			_, _ = w.Write([]byte(`{"allowed":true}`))
		}, DiagnosticTimeout, "no answer within"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, hits := webhookServer(t, tt.handler)
			h := webhookHost(t, srv.URL, vocab.BeforeToolCall, 50*time.Millisecond)
			core := &coreCounter{}
			c := call("w-1", "write", "x")
			r, d := h.Execute(context.Background(), c, core.run)
			assertPaired(t, c, r)
			if core.calls.Load() != 0 || hits.Load() != 1 {
				t.Fatalf("core %d hits %d", core.calls.Load(), hits.Load())
			}
			if len(d) != 1 || d[0].Kind != tt.kind || !strings.Contains(d[0].Message, tt.message) {
				t.Fatalf("diagnostics %+v, want %s containing %q", d, tt.kind, tt.message)
			}
		})
	}
}

func TestWebhook_BrokenAfterHookOnlyDiagnoses_RHK5(t *testing.T) {
	srv, hits := webhookServer(t, func(w http.ResponseWriter, review HookReview) {
		if review.Result == nil || review.Result.Content[0].Text != "noted: x" {
			t.Errorf("after webhook did not get the result: %+v", review.Result)
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	h := webhookHost(t, srv.URL, vocab.AfterToolResult, time.Second)
	core := &coreCounter{}
	r, d := h.Execute(context.Background(), call("1", "t", "x"), core.run)
	if r.IsError || core.calls.Load() != 1 || hits.Load() != 1 {
		t.Fatalf("result %+v core %d hits %d", r, core.calls.Load(), hits.Load())
	}
	if len(d) != 1 || d[0].Kind != DiagnosticError || !strings.Contains(d[0].Message, "503") {
		t.Fatalf("diagnostics %+v", d)
	}
}

// TestWebhook_RedirectFailsClosedWithoutFollowingOrLeaking: a webhook that
// answers 302 to a metadata endpoint blocks the call; the endpoint is never
// contacted and nothing of it appears in the diagnostic.
func TestWebhook_RedirectFailsClosedWithoutFollowingOrLeaking(t *testing.T) {
	srv := testnet.RedirectToMetadata(t, `{"allowed":true,"message":"AKIA-LEAKED"}`)
	h := webhookHost(t, srv.URL, vocab.BeforeToolCall, time.Second)
	c := call("r-1", "write", "x")
	r, d := h.Execute(context.Background(), c, (&coreCounter{}).run)
	assertPaired(t, c, r)
	if !r.IsError || srv.Contacted() || len(d) != 1 || strings.Contains(d[0].Message, "AKIA") || !strings.Contains(d[0].Message, "redirects are not followed") {
		t.Fatalf("result %+v diagnostics %+v contacted %v", r, d, srv.Contacted())
	}
}

// A webhook answers the outcomes of its event: a BeforeToolCall rewrite is
// what runs; a key its event does not allow fails the call closed; a
// session event's review carries the session and prompt instead of a call.
func TestWebhook_OutcomesPerEvent(t *testing.T) {
	srv, _ := webhookServer(t, func(w http.ResponseWriter, review HookReview) {
		switch review.Event {
		case vocab.UserInput:
			if review.Call != nil || review.Prompt == nil || review.Session == nil || review.Session.ID != "s-1" {
				t.Errorf("UserInput review %+v", review)
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"allowed": true, "input": strings.ToUpper(review.Prompt.Text), "context": "from the webhook"})
		default:
			if review.Call.Arguments["text"] == "bad" {
				_ = json.NewEncoder(w).Encode(map[string]any{"allowed": true, "input": "not for tool calls"})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"allowed": true, "arguments": map[string]any{"text": "rewritten"}})
		}
	})
	h := webhookHost(t, srv.URL, vocab.BeforeToolCall, time.Second)
	var ran string
	core := func(_ context.Context, c ToolCall) (ToolResult, error) {
		ran, _ = c.Arguments["text"].(string)
		return ToolResult{}, nil
	}
	if r, _ := h.Execute(context.Background(), call("1", "t", "fine"), core); r.IsError || ran != "rewritten" {
		t.Fatalf("rewrite: %+v ran %q", r, ran)
	}
	ran = ""
	r, d := h.Execute(context.Background(), call("2", "t", "bad"), core)
	if !r.IsError || ran != "" || len(d) != 1 || !strings.Contains(d[0].Message, `outcome key "input" is not allowed for BeforeToolCall`) {
		t.Fatalf("bad key: %+v %+v ran %q", r, d, ran)
	}

	h = webhookHost(t, srv.URL, vocab.UserInput, time.Second)
	out, err := h.Event(context.Background(), EventRequest{Event: vocab.UserInput, Session: SessionInfo{ID: "s-1"}, Prompt: &Prompt{Text: "hi"}})
	if err != nil || !out.Allowed || out.Input == nil || *out.Input != "HI" || hookTexts(out) != "from the webhook" {
		t.Fatalf("UserInput: %+v %v", out, err)
	}
}
