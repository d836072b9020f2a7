package hostd

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// TestTools_ServiceTokenIsPresentedOnEveryCall: with --service-token-file,
// hostd sends the projected token as a bearer token with every tool call
// (internal/outbound tests its rotation and a missing file).
func TestTools_ServiceTokenIsPresentedOnEveryCall(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	svc := newToolService(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		recordNote(w, r)
	})
	tokenFile := testenv.TempFile(t, "token", []byte("projected.service.token\n"), 0o600)
	_, api, _ := serveContext(t, contextData(t, runnableRegistry(svc.URL+"/notes", 5)),
		Options{ServiceTokenFile: tokenFile, Now: func() time.Time { return time.UnixMilli(42) }})
	for i := range 2 {
		code, resp, _ := runTool(t, api.URL, "review_note", map[string]any{"id": "t", "arguments": map[string]any{"text": "ok"}})
		if code != 200 || resp.Result.IsError {
			t.Fatalf("call %d: %d %+v", i, code, resp)
		}
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) != 2 || got[0] != "Bearer projected.service.token" || got[1] != got[0] {
		t.Fatalf("Authorization headers %q", got)
	}
}

// TestWebhook_ServiceTokenIsPresented: a webhook hook's Service gets the
// token too (the same outbound client as tools).
func TestWebhook_ServiceTokenIsPresented(t *testing.T) {
	var got string
	svc := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		_, _ = io.WriteString(w, `{"allowed":true}`)
	})
	tokenFile := testenv.TempFile(t, "token", []byte("projected.service.token"), 0o600)
	reg := contract.Registry{
		Tools: []contract.Tool{{Name: "run", Description: "Runs.", Extension: "policy"}},
		Hooks: []contract.Hook{{Extension: "policy", Name: "remote", Event: contract.EventBeforeToolCall, TimeoutSeconds: 5,
			Webhook: &contract.WebhookHook{URL: svc.URL + "/check"}}},
		Extensions: []string{"policy"},
	}
	_, api, _ := serveContext(t, contextData(t, reg), Options{ServiceTokenFile: tokenFile})
	var out BeforeResponse
	if code := post(t, api.URL+"/v1/before", `{"call":{"id":"c1","name":"run","arguments":{}}}`, &out); code != 200 || !out.Allowed {
		t.Fatalf("before: %d %+v", code, out)
	}
	if got != "Bearer projected.service.token" {
		t.Fatalf("the webhook got Authorization %q", got)
	}
}
