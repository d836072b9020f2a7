package hostd

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// channelRequest sends one request to hostd's real listener with the given
// Host and headers and returns the status and the decoded error message.
func channelRequest(t *testing.T, method, url, host, body string, header map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var e ErrorResponse
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error
}

// A web page in a browser on the agent's machine can reach 127.0.0.1. A
// cross-origin "simple" POST (text/plain, no preflight) must not run a tool
// or a hook check, and a DNS-rebound name must not read the registry or
// talk MCP: every API route refuses them with 403 (or 415 for a body that is
// not JSON) before anything runs, and the tool's Service is never called.
func TestAPI_RefusesCrossOriginAndRebindingRequests(t *testing.T) {
	svc := newToolService(t, recordNote)
	_, addr := serveListener(t, runnableRegistry(svc.URL, 5), Limits{})
	base := "http://" + addr
	call := `{"call":{"id":"c1","name":"review_note","arguments":{"text":"from a web page"}}}`
	page := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}
	oldBrowser := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}

	for _, c := range []struct {
		name, method, path, host, body string
		header                         map[string]string
		want                           int
	}{
		{"cross-origin text/plain POST to a tool", "POST", "/v1/tools/review_note", "", call, page, http.StatusForbidden},
		{"cross-origin text/plain POST to before", "POST", "/v1/before", "", call, page, http.StatusForbidden},
		{"cross-origin POST from a browser without Sec-Fetch-Site", "POST", "/v1/tools/review_note", "", call, oldBrowser, http.StatusForbidden},
		{"cross-origin JSON POST to MCP", "POST", MCPPath, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, http.StatusForbidden},
		{"cross-origin GET of the registry", "GET", "/v1/registry", "", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-origin text/plain POST to a tool", "POST", "/v1/tools/review_note", "", call, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"form POST to before", "POST", "/v1/before", "", call, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"POST without a content type", "POST", "/v1/tools/review_note", "", call, nil, http.StatusUnsupportedMediaType},
		{"rebinding Host on the registry", "GET", "/v1/registry", "attacker.example:8181", "", nil, http.StatusForbidden},
		{"rebinding Host on MCP", "POST", MCPPath, "attacker.example:8181", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, http.StatusForbidden},
		{"rebinding Host on MCP's event stream", "GET", MCPPath, "attacker.example", "", map[string]string{"Accept": "text/event-stream"}, http.StatusForbidden},
		{"rebinding Host on a tool", "POST", "/v1/tools/review_note", "127.0.0.1.attacker.example:8181", call, map[string]string{"Content-Type": "application/json"}, http.StatusForbidden},
	} {
		code, msg := channelRequest(t, c.method, base+c.path, c.host, c.body, c.header)
		if code != c.want || msg == "" {
			t.Errorf("%s: %s %s = %d %q, want %d with an error message", c.name, c.method, c.path, code, msg, c.want)
		}
	}
	if inv := svc.last.Load(); inv != nil {
		t.Fatalf("a refused request reached the tool's Service: %+v", inv.Call)
	}

	// Agents are unaffected: no browser headers, a loopback Host, JSON.
	for _, host := range []string{"", "localhost:8181", "127.0.0.1", "[::1]:8181", "LOCALHOST"} {
		code, msg := channelRequest(t, "POST", base+"/v1/tools/review_note", host, call, map[string]string{"Content-Type": "application/json; charset=utf-8"})
		if code != http.StatusOK {
			t.Errorf("Host %q: a local JSON tool call = %d %q, want 200", host, code, msg)
		}
	}
	if code, msg := channelRequest(t, "GET", base+"/v1/registry", "", "", map[string]string{"Sec-Fetch-Site": "none"}); code != http.StatusOK {
		t.Errorf("a GET typed into the address bar (Sec-Fetch-Site: none) = %d %q", code, msg)
	}
	if svc.last.Load() == nil {
		t.Fatal("the allowed tool calls never reached the Service")
	}
}

// The probe listener stays reachable by the kubelet, which probes the pod IP
// (a Host that is not loopback).
func TestProbeHandler_AnswersANonLoopbackHost(t *testing.T) {
	s, _, _ := newTestServer(t, fixedRegistry())
	probes := testnet.ServeHandler(t, s.ProbeHandler())
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, msg := channelRequest(t, "GET", probes.URL+path, "10.1.2.3:8182", "", nil); code != http.StatusOK {
			t.Errorf("GET %s with the pod IP as Host = %d %q, want 200", path, code, msg)
		}
	}
}
