package reviewnotes

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

func invocation(t *testing.T, text string) []byte {
	t.Helper()
	b, err := json.Marshal(exthost.ToolInvocation{Kind: exthost.ToolInvocationKind, Tool: "review_note",
		Call: exthost.ToolCall{ID: "c-1", Name: "review_note", Arguments: map[string]any{"text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestServer_RecordsSignedNotesAndRefusesUnsigned(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("k3y"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{SigningKeyFile: key}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	post := func(body []byte, sig string) (*http.Response, exthost.ToolAnswer) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/notes", bytes.NewReader(body))
		if sig != "" {
			req.Header.Set(outbound.SignatureHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a exthost.ToolAnswer
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return resp, a
	}
	body := invocation(t, "looks good")
	if resp, _ := post(body, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d", resp.StatusCode)
	}
	if resp, _ := post(body, outbound.Signature([]byte("other"), body)); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	resp, a := post(body, outbound.Signature([]byte("k3y"), body))
	if resp.StatusCode != 200 || a.IsError || a.Content[0].Text != "note 1 recorded" {
		t.Fatalf("signed: %d %+v", resp.StatusCode, a)
	}
	if notes := s.Notes(); len(notes) != 1 || notes[0].CallID != "c-1" || notes[0].Text != "looks good" {
		t.Fatalf("notes %+v", notes)
	}
}
