package exthost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Tool call timeouts: a runnable tool that sets none gets DefaultToolTimeout;
// none may make hostd wait longer than MaxToolTimeout.
const (
	DefaultToolTimeout = 30 * time.Second
	MaxToolTimeout     = 300 * time.Second
)

// maxToolAnswer bounds what hostd reads from a tool's Service: the answer
// goes back to the agent whole, so it is held in memory.
const maxToolAnswer = MaxInputSize

// ToolInvocationKind identifies a tool Service's request body.
const ToolInvocationKind = "ToolInvocation"

// ToolInvocation is the JSON body POSTed to a runnable tool's Service. The
// call has passed the input schema and every before hook.
type ToolInvocation struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Extension  string        `json:"extension"`
	Tool       string        `json:"tool"`
	Call       ToolCall      `json:"call"`
	Workspace  WorkspaceInfo `json:"workspace"`
}

// ToolAnswer is what a tool's Service answers with a 2xx status: the result's
// content, whether it is an error, and optional details. hostd pairs it with
// the call (toolCallId, toolName); the Service does not have to.
type ToolAnswer struct {
	Content []Content      `json:"content"`
	IsError bool           `json:"isError,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// ServiceCore is the CoreFunc of a runnable tool: it POSTs a ToolInvocation to
// the tool's Service under the tool's deadline. A failure to get a usable
// answer (no answer in time, a redirect, a non-2xx status, a body that is not
// a ToolAnswer) is an error whose text says which, so the agent's model sees
// why the tool failed.
func ServiceCore(tool contract.Tool, ws WorkspaceInfo, client *http.Client) (CoreFunc, error) {
	if tool.Service == nil || tool.Service.URL == "" {
		return nil, fmt.Errorf("tool %q has no service", tool.Name)
	}
	if client == nil {
		client = http.DefaultClient
	}
	// Whatever client hostd was given, a tool's call stays at its Service: a
	// redirect is answered as a failure, never followed.
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client = &noRedirect
	timeout := time.Duration(tool.Service.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	timeout = min(timeout, MaxToolTimeout)
	url := tool.Service.URL
	return func(ctx context.Context, call ToolCall) (ToolResult, error) {
		body, err := json.Marshal(ToolInvocation{APIVersion: contract.APIVersion, Kind: ToolInvocationKind,
			Extension: tool.Extension, Tool: tool.Name, Call: call, Workspace: ws})
		if err != nil {
			return ToolResult{}, fmt.Errorf("encode the call: %w", err)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		answer, err := postTool(ctx, client, url, body)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ToolResult{}, fmt.Errorf("tool %q: its service %s did not answer within %s", tool.Name, url, timeout)
			}
			return ToolResult{}, fmt.Errorf("tool %q: its service %s: %w", tool.Name, url, err)
		}
		return ToolResult{ToolCallID: call.ID, ToolName: call.Name, IsError: answer.IsError,
			Content: answer.Content, Details: answer.Details}, nil
	}, nil
}

func postTool(ctx context.Context, client *http.Client, url string, body []byte) (ToolAnswer, error) {
	var answer ToolAnswer
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return answer, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return answer, err
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		return answer, fmt.Errorf("answered a redirect (%s to %q); redirects are never followed", resp.Status, resp.Header.Get("Location"))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return answer, fmt.Errorf("answered %s", resp.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxToolAnswer+1))
	if err != nil {
		return answer, fmt.Errorf("reading the answer: %w", err)
	}
	if len(raw) > maxToolAnswer {
		return answer, fmt.Errorf("answer exceeds %d bytes", maxToolAnswer)
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return answer, fmt.Errorf("answered a body that is not a tool answer: %w", err)
	}
	if answer.Content == nil {
		return answer, errors.New(`answer has no "content"`)
	}
	return answer, nil
}
