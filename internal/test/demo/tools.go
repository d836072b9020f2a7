package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

// toolServer is the sample tool's Service, run as a local process: this
// control plane has no kubelet to run its Deployment.
type toolServer struct {
	addr    string // where it listens, 127.0.0.1:port
	service string // the Service host:port the registry names
	keyFile string // the key hostd signs with and the server verifies
}

// startToolServer runs review-notes (samples/review-notes) for the sample
// tool, with a fresh signing key, and returns what hostd needs to reach it:
// the Service's host:port as the published registry names it (resolved by
// the manager, like a webhook's) mapped to the local address.
func (d *demo) startToolServer(manifestJSON string) (*toolServer, error) {
	var m contract.Manifest
	if err := json.Unmarshal([]byte(manifestJSON), &m); err != nil {
		return nil, fmt.Errorf("reading manifest.json: %w", err)
	}
	var svcURL string
	for _, t := range m.Tools {
		if t.Name == sampleTool && t.Service != nil {
			svcURL = t.Service.URL
		}
	}
	if svcURL == "" {
		return nil, fmt.Errorf("the published registry has no runnable %s (manifest.json tools)", sampleTool)
	}
	u, err := url.Parse(svcURL)
	if err != nil {
		return nil, fmt.Errorf("the %s service URL %q: %w", sampleTool, svcURL, err)
	}
	ts := &toolServer{service: u.Host, keyFile: filepath.Join(d.workDir, "signing-key")}
	if err := os.WriteFile(ts.keyFile, []byte(outbound.NewSecret()+"\n"), 0o600); err != nil {
		return nil, err
	}
	if ts.addr, err = freeAddr(); err != nil {
		return nil, err
	}
	d.step("Starting %s's Service: review-notes --addr %s (its Deployment's command; %s in the registry)", sampleTool, ts.addr, svcURL)
	p, err := d.start("review-notes", d.o.ReviewNotes, []string{"--addr", ts.addr, "--signing-key-file", ts.keyFile, "--url", svcURL}, nil)
	if err != nil {
		return nil, err
	}
	if err := p.waitHTTP("http://"+ts.addr+"/healthz", 30*time.Second); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.out, "hostd will dial %s at %s (--service-address) and sign each call with %s, which the server verifies\n",
		ts.service, ts.addr, ts.keyFile)
	return ts, nil
}

// hostdArgs are the flags that let hostd reach the tool server.
func (ts *toolServer) hostdArgs() []string {
	return []string{"--signing-key-file", ts.keyFile, "--service-address", ts.service + "=" + ts.addr}
}

// runTools runs the sample tool through hostd, an ordinary note and a SECRET
// one, and reads back what the tool's Service recorded.
func (d *demo) runTools(ctx context.Context, base string, ts *toolServer, res *Result) error {
	res.ToolCall = exthost.ToolCall{ID: "call-3", Name: sampleTool, Arguments: map[string]any{"text": "parser.go:42 drops the error from Close"}}
	res.SecretToolCall = exthost.ToolCall{ID: "call-4", Name: sampleTool, Arguments: map[string]any{"text": "the staging password is SECRET-hunter2"}}
	var err error
	if res.ToolRun, err = d.runTool(ctx, base, res.ToolCall); err != nil {
		return err
	}
	if res.SecretToolRun, err = d.runTool(ctx, base, res.SecretToolCall); err != nil {
		return err
	}
	d.step("GET http://%s/notes (what the review-notes Service recorded)", ts.addr)
	var recorded notes.List
	raw, err := httpGet(ctx, "http://"+ts.addr+"/notes")
	if err == nil {
		err = json.Unmarshal(raw, &recorded)
	}
	if err != nil {
		return fmt.Errorf("reading the recorded notes: %w", err)
	}
	fmt.Fprintln(d.out, strings.TrimSpace(string(raw)))
	res.RecordedNotes = recorded.Notes
	if err := checkToolRuns(res); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nhostd ran review_note itself: the ordinary note passed the input schema and the hooks and was\n"+
		"recorded by the Service; the SECRET note was denied by the same hook and never reached it.\n")
	return nil
}

// checkToolRuns fails the demo unless the ordinary note was recorded and
// the SECRET one stopped before the Service.
func checkToolRuns(res *Result) error {
	ok, secret := res.ToolRun, res.SecretToolRun
	switch {
	case !ok.Executed || ok.Result.IsError || ok.Result.ToolCallID != res.ToolCall.ID:
		return fmt.Errorf("hostd did not run the ordinary note %s: %+v", res.ToolCall.ID, ok)
	case secret.Executed || !secret.Result.IsError || secret.Result.ToolCallID != res.SecretToolCall.ID:
		return fmt.Errorf("the SECRET note %s was not stopped before the Service: %+v", res.SecretToolCall.ID, secret)
	case len(res.RecordedNotes) != 1 || res.RecordedNotes[0].CallID != res.ToolCall.ID:
		return fmt.Errorf("the Service recorded %+v, want exactly the ordinary note %s", res.RecordedNotes, res.ToolCall.ID)
	}
	return nil
}

// postJSON POSTs body to url, prints both sides, and decodes a 200 answer.
func (d *demo) postJSON(ctx context.Context, url string, body []byte, out any) error {
	u, _ := neturlPath(url)
	d.step("POST %s %s", u, body)
	raw, err := doJSON(ctx, url, body, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "200 OK %s\n", raw)
	return nil
}

// doJSON POSTs body to url and decodes a 200 answer into out; it returns
// the answer indented.
func doJSON(ctx context.Context, url string, body []byte, out any) ([]byte, error) {
	u, _ := neturlPath(url)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hostd POST %s: %w", u, err)
	}
	defer r.Body.Close()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("hostd POST %s: %w", u, err)
	}
	if r.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("hostd POST %s: %s: %s", u, r.Status, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("hostd POST %s: %w: %s", u, err, raw)
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, raw, "", "  ") != nil {
		return bytes.TrimSpace(raw), nil
	}
	return bytes.TrimSpace(pretty.Bytes()), nil
}

func neturlPath(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, err
	}
	return u.Path, nil
}

func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, r.Status)
	}
	return io.ReadAll(r.Body)
}
