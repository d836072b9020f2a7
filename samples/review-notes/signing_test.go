package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/sources"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

// capturedCall is one signed call exactly as hostd sent it.
type capturedCall struct {
	header http.Header
	body   []byte
}

// recorder keeps every call that passes through it.
type recorder struct {
	mu    sync.Mutex
	calls []capturedCall
}

func (r *recorder) keep(req *http.Request) []byte {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.calls = append(r.calls, capturedCall{header: req.Header.Clone(), body: body})
	r.mu.Unlock()
	return body
}

func (r *recorder) last(t *testing.T) capturedCall {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("no call was recorded")
	}
	return r.calls[len(r.calls)-1]
}

// replay sends a captured call again, byte for byte, to url.
func replay(t *testing.T, url string, c capturedCall) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// toolContextDir writes a published context whose registry has two
// runnable tools: review_note (the real tool server, by its Service name)
// and deploy (another tool's Service).
func toolContextDir(t *testing.T, deployURL string) string {
	t.Helper()
	reg := contract.Registry{
		Tools: []contract.Tool{
			{Name: "review_note", Description: "Record a review note.", Extension: "review-extension",
				Service: &contract.ToolService{URL: "http://review-notes.team-a.svc:8080/notes", TimeoutSeconds: 5}},
			{Name: "deploy", Description: "Deploy.", Extension: "deploy-extension",
				Service: &contract.ToolService{URL: deployURL, TimeoutSeconds: 5}},
		},
		Extensions: []string{"deploy-extension", "review-extension"},
	}
	res, err := resources.Render(resources.Input{Workspace: contract.WorkspaceRef{Name: "dev", Namespace: "team-a"}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return resourcestest.Tree(t, res.Data)
}

// runTool asks hostd to run a tool and returns its answer's text.
func runHostdTool(t *testing.T, hostdAddr, tool, text string) string {
	t.Helper()
	body := `{"call":{"id":"c-` + tool + `","arguments":{"text":"` + text + `"}}}`
	resp, err := http.Post("http://"+hostdAddr+"/v1/tools/"+tool, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Executed bool `json:"executed"`
		Result   struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || !out.Executed || out.Result.IsError || len(out.Result.Content) == 0 {
		t.Fatalf("hostd ran %s: %d %+v %v", tool, resp.StatusCode, out, err)
	}
	return out.Result.Content[0].Text
}

// A real hostd signs each tool call for its target; a real review-notes
// accepts hostd's call once and refuses
// the same call replayed, a stale signed call, and a call hostd signed for
// another tool (deploy) that deploy's Service replays to it.
func TestReviewNotes_RefusesReplayedStaleAndCrossToolCalls(t *testing.T) {
	keyFile := testenv.TempFile(t, "signing-key", []byte(outbound.NewSecret()+"\n"), 0o600)
	const notesURL = "http://review-notes.team-a.svc:8080/notes"
	toolAddr := testnet.FreeAddr(t)
	testenv.StartCommand(t, newRootCommand(), "--addr", toolAddr, "--signing-key-file", keyFile, "--url", notesURL)
	testnet.WaitStatus(t, "http://"+toolAddr+"/healthz", http.StatusOK)

	// hostd reaches review-notes through a recorder, as a network tap would.
	var toReview, toDeploy recorder
	target, _ := url.Parse("http://" + toolAddr)
	tap := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.Body = io.NopCloser(bytes.NewReader(toReview.keep(pr.In)))
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
	}})
	t.Cleanup(tap.Close)
	// deploy's Service: it answers, and keeps what it received.
	deploy := testnet.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		toDeploy.keep(r)
		_, _ = io.WriteString(w, `{"content":[{"type":"text","text":"deployed"}]}`)
	})

	hostdAddr := testnet.FreeAddr(t)
	testenv.StartCommand(t, agentcmd.NewHostdCommand(sources.LoadFiller), "--allow-unsigned-context", "--context-dir", toolContextDir(t, deploy.URL+"/run"), "--addr", hostdAddr,
		"--signing-key-file", keyFile, "--service-address", "review-notes.team-a.svc:8080="+strings.TrimPrefix(tap.URL, "http://"))
	testnet.WaitStatus(t, "http://"+hostdAddr+"/readyz", http.StatusOK)

	if got := runHostdTool(t, hostdAddr, "review_note", "first"); got != "note 1 recorded" {
		t.Fatalf("hostd's signed call: %q", got)
	}
	toolNotes := "http://" + toolAddr + "/notes"
	if code, body := replay(t, toolNotes, toReview.last(t)); code != http.StatusUnauthorized || !strings.Contains(body, "already received") {
		t.Errorf("replayed call: %d %q, want 401 (already received)", code, body)
	}

	// Stale: a call signed with the right key for review_note, 6 minutes ago.
	stale := toReview.last(t)
	secrets, err := outbound.ReadSecrets(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	stale.header = http.Header{"Content-Type": {"application/json"}}
	if err := outbound.Sign(stale.header, secrets, "msg_stale", time.Now().Add(-6*time.Minute), stale.body); err != nil {
		t.Fatal(err)
	}
	if code, body := replay(t, toolNotes, stale); code != http.StatusUnauthorized || !strings.Contains(body, "tolerance") {
		t.Errorf("stale call: %d %q, want 401 (outside the tolerance)", code, body)
	}

	// Cross-tool: deploy's Service replays the call hostd signed for deploy,
	// byte for byte, to review-notes.
	if got := runHostdTool(t, hostdAddr, "deploy", "ship it"); got != "deployed" {
		t.Fatalf("deploy: %q", got)
	}
	cross := toDeploy.last(t)
	if code, body := replay(t, toolNotes, cross); code != http.StatusUnauthorized || !strings.Contains(body, "another receiver") {
		t.Errorf("call for deploy replayed to review-notes: %d %q, want 401 (signed for another receiver)", code, body)
	}

	_, body := testnet.Get(t, toolNotes)
	var list notes.List
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Notes) != 1 || list.Notes[0].Text != "first" {
		t.Fatalf("recorded notes %+v (%v), want only hostd's one call", list.Notes, err)
	}
}

// review-notes refuses to start verifying without knowing its own URL:
// it could not tell a call for it from a call for another tool.
func TestReviewNotes_SigningKeyNeedsItsURL(t *testing.T) {
	cmd := newRootCommand()
	cmd.SetArgs([]string{"--addr", testnet.FreeAddr(t), "--signing-key-file", "/nonexistent"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--url") {
		t.Fatalf("err = %v, want one naming --url", err)
	}
}
