package notes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

const testURL = "http://review-notes.team-a.svc:8080/notes"

func invocation(t *testing.T, text string, aud outbound.Audience) []byte {
	t.Helper()
	b, err := json.Marshal(exthost.ToolInvocation{Kind: exthost.ToolInvocationKind, Tool: "review_note", Audience: aud,
		Call: exthost.ToolCall{ID: "c-1", Name: "review_note", Arguments: map[string]any{"text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signWith(t *testing.T, keyFile string, at time.Time, body []byte) http.Header {
	t.Helper()
	secrets, err := outbound.ReadSecrets(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := outbound.Sign(h, secrets, fmt.Sprintf("msg_%d", at.UnixNano()), at, body); err != nil {
		t.Fatal(err)
	}
	return h
}

func writeSecret(t *testing.T) string {
	t.Helper()
	return testenv.TempFile(t, "key", []byte(outbound.NewSecret()), 0o600)
}

func TestServer_RecordsSignedNotesAndRefusesUnsigned(t *testing.T) {
	key := writeSecret(t)
	s := &Server{SigningKeyFile: key, URL: testURL}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	post := func(body []byte, h http.Header) (int, exthost.ToolAnswer) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/notes", bytes.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a exthost.ToolAnswer
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a
	}
	me := outbound.Audience{Kind: outbound.AudienceTool, Name: ToolName, URL: testURL}
	body := invocation(t, "looks good", me)
	if code, _ := post(body, nil); code != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d", code)
	}
	if code, _ := post(body, signWith(t, writeSecret(t), time.Now(), body)); code != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d", code)
	}
	signed := signWith(t, key, time.Now(), body)
	code, a := post(body, signed)
	if code != 200 || a.IsError || a.Content[0].Text != "note 1 recorded" {
		t.Fatalf("signed: %d %+v", code, a)
	}
	if code, _ := post(body, signed); code != http.StatusUnauthorized {
		t.Fatalf("replayed: %d", code)
	}
	if code, _ := post(body, signWith(t, key, time.Now().Add(-10*time.Minute), body)); code != http.StatusUnauthorized {
		t.Fatalf("stale: %d", code)
	}
	other := invocation(t, "for another tool", outbound.Audience{Kind: outbound.AudienceTool, Name: "deploy", URL: "http://deploy.team-a.svc:8080/run"})
	if code, _ := post(other, signWith(t, key, time.Now(), other)); code != http.StatusUnauthorized {
		t.Fatalf("signed for another tool: %d", code)
	}
	if notes := s.Notes(); len(notes) != 1 || notes[0].CallID != "c-1" || notes[0].Text != "looks good" {
		t.Fatalf("notes %+v", notes)
	}
}
