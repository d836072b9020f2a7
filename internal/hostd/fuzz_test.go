package hostd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecodeCall: request bodies come from any agent in any language. Decoding
// must never panic, and whatever it accepts carries a call id and name.
func FuzzDecodeCall(f *testing.F) {
	for _, seed := range []string{
		`{"call":{"id":"1","name":"review_note","arguments":{"text":"hi"}}}`,
		`{"call":{"id":"1","name":"t"},"result":{"toolCallId":"1","toolName":"t","isError":false,"content":[{"type":"text","text":"ok"}]}}`,
		`{"call":{"id":"","name":"t"}}`,
		`{"call":{"id":"1","name":"t","arguments":[1,2]}}`,
		`{"call":{"id":"1","name":"t"}} trailing`,
		`{"call":{"id":"1","name":"t","arguments":{"n":1e999}}}`,
		`null`, `{`, ``,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, body string, withResult bool) {
		req, err := DecodeCall(strings.NewReader(body), withResult)
		if err != nil {
			return
		}
		if req.Call.ID == "" || req.Call.Name == "" || (withResult && req.Result == nil) {
			t.Fatalf("accepted an incomplete request: %+v", req)
		}
	})
}

// hostdEndpoints are the POST endpoints agents send bodies to.
var hostdEndpoints = []string{"/v1/before", "/v1/after", "/v1/render", "/v1/activate", "/v1/tools/review_note",
	"/v1/events/UserInput", "/v1/events/SessionStart"}

// FuzzEndpoints sends arbitrary bodies to every POST endpoint of a server
// holding the fixed example (docs/rules.md)'s context (review_note runnable). No body crashes the server or earns a 5xx; every
// answer is JSON; an error answer carries a message; a blocked before call is
// paired with its call; no SECRET note ever reaches the tool's Service.
func FuzzEndpoints(f *testing.F) {
	for _, seed := range []struct {
		endpoint uint8
		body     string
	}{
		{0, `{"call":{"id":"1","name":"review_note","arguments":{"text":"SECRET"}}}`},
		{0, `{"call":{"id":"2","name":"bash","arguments":{"command":"rm -rf /"}}}`},
		{1, `{"call":{"id":"1","name":"review_note"},"result":{"toolCallId":"1","toolName":"review_note","isError":true,"content":[{"type":"text","text":"x"}]}}`},
		{2, `{"template":"review","args":{"file":"a.go","owner":"me"}}`},
		{2, `{"template":"review","args":{"file":"{{owner}}"}}`},
		{2, `{"template":"nope"}`},
		{3, `{"skill":"review","files":["checklist.md","checklist.md"]}`},
		{3, `{"skill":"review","files":["../../etc/passwd","/etc/passwd","%2e%2e/checklist.md"]}`},
		{3, `{"skill":"review","files":null}`},
		{3, `[]`},
		{0, `{"call":{"id":"1","name":"t"}} {}`},
		{4, `{"call":{"id":"1","arguments":{"text":"fine"}}}`},
		{4, `{"call":{"id":"1","arguments":{"text":"SECRET"}}}`},
		{4, `{"call":{"id":"1","arguments":{"text":1,"x":[]}}}`},
		{5, `{"session":{"id":"s"},"prompt":{"text":"the SECRET"}}`},
		{5, `{"prompt":null}`},
		{6, `{"session":{"id":1}}`},
		{0, `{"call":{"id":"1","name":"review_note","arguments":{"text":"x"}},"acceptArguments":true}`},
	} {
		f.Add(seed.endpoint, seed.body)
	}
	// review_note is runnable here, so /v1/tools bodies reach a real Service.
	svc := newToolService(f, recordNote)
	s, _, _ := newTestServer(f, runnableRegistry(svc.URL, 5))
	h := s.Handler()
	f.Fuzz(func(t *testing.T, endpoint uint8, body string) {
		path := hostdEndpoints[int(endpoint)%len(hostdEndpoints)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8181"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s answered %d: %s", path, rec.Code, rec.Body)
		}
		var answer map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("%s answered %d with a body that is not JSON: %q", path, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			if msg, _ := answer["error"].(string); msg == "" {
				t.Fatalf("%s answered %d without an error message: %s", path, rec.Code, rec.Body)
			}
			return
		}
		if inv := svc.last.Load(); inv != nil {
			if text, _ := inv.Call.Arguments["text"].(string); strings.Contains(text, "SECRET") {
				t.Fatalf("a SECRET note reached the tool's Service through %s: %s", path, body)
			}
		}
		if path == "/v1/before" && answer["allowed"] != true {
			req, err := DecodeCall(strings.NewReader(body), false)
			if err != nil {
				t.Fatalf("blocked a call it could not decode: %v", err)
			}
			result, _ := answer["result"].(map[string]any)
			if result["toolCallId"] != req.Call.ID || result["toolName"] != req.Call.Name || result["isError"] != true {
				t.Fatalf("blocked result not paired with call %q/%q: %s", req.Call.ID, req.Call.Name, rec.Body)
			}
		}
	})
}
