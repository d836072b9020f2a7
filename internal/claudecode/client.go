package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// DefaultTimeout bounds a hostd call of the command hook. It stays under the
// 60 s hook timeout docs/agents.md configures, so the hook answers before
// Claude Code gives up on it.
const DefaultTimeout = 50 * time.Second

// HostdClient is the Policy of the command hooks: hostd's /v1/before,
// /v1/after and /v1/events over HTTP.
type HostdClient struct {
	// URL is hostd's base URL, e.g. http://127.0.0.1:8181.
	URL string
	// Client calls hostd; nil means http.DefaultClient.
	Client *http.Client
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// Headless says the agent has no user to ask (Codex): an imposed hook's
	// ask routed to headless agents goes to the cluster's approvers
	// (docs/hooks.md, "Approvals").
	Headless bool
}

// Before asks POST /v1/before, saying the hook applies rewritten arguments.
func (c HostdClient) Before(ctx context.Context, call exthost.ToolCall) (BeforeVerdict, error) {
	var resp struct {
		Allowed   bool                `json:"allowed"`
		Ask       bool                `json:"ask"`
		Arguments map[string]any      `json:"arguments"`
		Result    *exthost.ToolResult `json:"result"`
	}
	body := map[string]any{"call": call, "acceptArguments": true}
	if c.Headless {
		body["headless"] = true
	}
	if err := c.post(ctx, "/v1/before", withRuntime(ctx, body), &resp); err != nil {
		return BeforeVerdict{}, err
	}
	v := BeforeVerdict{Ask: resp.Ask, Arguments: resp.Arguments}
	if !resp.Allowed {
		v.Blocked = resp.Result
		if v.Blocked == nil {
			v.Blocked = &exthost.ToolResult{ToolCallID: call.ID, ToolName: call.Name, IsError: true}
		}
	}
	return v, nil
}

// After sends POST /v1/after.
func (c HostdClient) After(ctx context.Context, call exthost.ToolCall, result exthost.ToolResult) ([]exthost.Diagnostic, error) {
	var resp struct {
		Diagnostics []exthost.Diagnostic `json:"diagnostics"`
	}
	err := c.post(ctx, "/v1/after", withRuntime(ctx, map[string]any{"call": call, "result": result}), &resp)
	return resp.Diagnostics, err
}

// Event sends POST /v1/events/{event}.
func (c HostdClient) Event(ctx context.Context, req exthost.EventRequest) (exthost.EventOutcome, error) {
	// hostd's EventResponse has the outcome's fields, named in lower case.
	var out exthost.EventOutcome
	body := map[string]any{"session": req.Session, "cwd": req.Cwd}
	if req.Prompt != nil {
		body["prompt"] = req.Prompt
	}
	if req.Stop != nil {
		body["stop"] = req.Stop
	}
	if req.Event == vocab.SessionStart {
		// The managed memory of Claude Code and Codex holds only the
		// platform's text: the tenants' comes as the session's context.
		body["projectContext"] = true
	}
	err := c.post(ctx, "/v1/events/"+string(req.Event), body, &out)
	return out, err
}

// post sends body to hostd and decodes a 200 answer into out. Anything else
// is an error naming what went wrong.
func (c HostdClient) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(c.URL, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxInput))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s answered %s: %s", url, resp.Status, e.Error)
		}
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unreadable answer: %w", url, err)
	}
	return nil
}

// withRuntime adds the session and cwd ctx carries to a tool call's body.
func withRuntime(ctx context.Context, body map[string]any) map[string]any {
	rt := exthost.RuntimeOf(ctx)
	body["session"], body["cwd"] = rt.Session, rt.Cwd
	return body
}
