package exthost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/jsonlimit"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Tool call timeouts: a runnable tool that sets none gets DefaultToolTimeout;
// none may make hostd wait longer than MaxToolTimeout.
const (
	DefaultToolTimeout = vocab.DefaultToolTimeoutSeconds * time.Second
	MaxToolTimeout     = vocab.MaxToolTimeoutSeconds * time.Second
)

// maxToolAnswer bounds what hostd reads from a tool's Service: the answer
// goes back to the agent whole, so it is held in memory.
const maxToolAnswer = MaxInputSize

// MaxToolAnswerValues bounds the JSON values and keys of a tool Service's
// answer, counted before it is decoded (decoded, 1 MiB of {} values would
// take ~100 MB); its decoding then draws from the decode budget of the
// request it answers (jsonlimit.Grant), like the request's own.
const MaxToolAnswerValues = jsonlimit.MaxValues

// ToolInvocationKind identifies a tool Service's request body.
const ToolInvocationKind = "ToolInvocation"

// ToolInvocation is the JSON body POSTed to a runnable tool's Service. The
// call has passed the input schema and every before hook.
type ToolInvocation struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Audience is the tool and URL the call is for, inside the signed body:
	// the Service refuses a call signed for another receiver, so a call
	// replayed from one tool's Service to another's is refused there.
	Audience  outbound.Audience `json:"audience"`
	Extension string            `json:"extension"`
	Tool      string            `json:"tool"`
	Call      ToolCall          `json:"call"`
	Workspace WorkspaceInfo     `json:"workspace"`
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
func ServiceCore(tool contract.Tool, ws WorkspaceInfo, client outbound.Doer) (CoreFunc, error) {
	if tool.Service == nil || tool.Service.URL == "" {
		return nil, fmt.Errorf("tool %q has no service", tool.Name)
	}
	if client == nil {
		client = defaultOutbound
	}
	timeout := time.Duration(tool.Service.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	timeout = min(timeout, MaxToolTimeout)
	target := outbound.Target{URL: tool.Service.URL, CABundle: tool.Service.CABundle}
	audience := outbound.Audience{Kind: outbound.AudienceTool, Name: tool.Name, URL: tool.Service.URL}
	return func(ctx context.Context, call ToolCall) (ToolResult, error) {
		body, err := json.Marshal(ToolInvocation{APIVersion: contract.APIVersion, Kind: ToolInvocationKind, Audience: audience,
			Extension: tool.Extension, Tool: tool.Name, Call: call, Workspace: ws})
		if err != nil {
			return ToolResult{}, fmt.Errorf("encode the call: %w", err)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		answer, err := postTool(ctx, client, target, body, timeout)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
				return ToolResult{}, fmt.Errorf("tool %q: its service %s did not answer within %s", tool.Name, target.URL, timeout)
			}
			return ToolResult{}, fmt.Errorf("tool %q: its service %s: %w", tool.Name, target.URL, err)
		}
		return ToolResult{ToolCallID: call.ID, ToolName: call.Name, IsError: answer.IsError,
			Content: answer.Content, Details: answer.Details}, nil
	}, nil
}

// postTool makes the call through the outbound client: no redirects (a 3xx
// is an error naming its status), the tool's deadline, a signed body when
// hostd has a key.
func postTool(ctx context.Context, client outbound.Doer, target outbound.Target, body []byte, timeout time.Duration) (ToolAnswer, error) {
	var answer ToolAnswer
	resp, err := client.Do(ctx, outbound.Request{
		Method: http.MethodPost, Target: target, Body: body, Timeout: timeout,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
	})
	if err != nil {
		return answer, err
	}
	if len(resp.Body) > maxToolAnswer {
		return answer, fmt.Errorf("answer exceeds the limit of %d bytes", maxToolAnswer)
	}
	if _, err := jsonlimit.Admit(ctx, resp.Body, MaxToolAnswerValues); err != nil {
		return answer, fmt.Errorf("answer refused before decoding: it %w", err)
	}
	if err := json.Unmarshal(resp.Body, &answer); err != nil {
		return answer, fmt.Errorf("answered a body that is not a tool answer: %w", err)
	}
	if answer.Content == nil {
		return answer, errors.New(`answer has no "content"`)
	}
	return answer, nil
}
