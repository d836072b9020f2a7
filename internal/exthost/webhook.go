package exthost

import (
	"bytes"
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

// maxWebhookResponse bounds what the host reads from a webhook: a hook answers
// a verdict, not a document.
const maxWebhookResponse = 64 << 10

// maxWebhookValues bounds the JSON values and keys of a webhook's answer,
// counted before it is decoded: a verdict is a handful.
const maxWebhookValues = 4096

// HookReviewKind identifies a webhook request body.
const HookReviewKind = "HookReview"

// HookReview is the JSON body POSTed to a webhook hook.
type HookReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Audience is the hook and URL the review is for, inside the signed
	// body: the webhook refuses a review signed for another receiver.
	Audience  outbound.Audience `json:"audience"`
	Extension string            `json:"extension"`
	Hook      string            `json:"hook"`
	Event     vocab.HookEvent   `json:"event"`
	// Call is set for tool events (docs/hooks.md), Result after the call.
	Call      *ToolCall     `json:"call,omitempty"`
	Result    *ToolResult   `json:"result,omitempty"`
	Session   *SessionInfo  `json:"session,omitempty"`
	Prompt    *Prompt       `json:"prompt,omitempty"`
	Workspace WorkspaceInfo `json:"workspace"`
	// Cwd is the agent's working directory; Params the hook's extension's
	// parameters (absent without a paramRef).
	Cwd    string            `json:"cwd,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	// The payloads of the turn, model and stop events.
	Turn     *Turn          `json:"turn,omitempty"`
	Model    *ModelInfo     `json:"model,omitempty"`
	Request  *ModelRequest  `json:"request,omitempty"`
	Response *ModelResponse `json:"response,omitempty"`
	Stop     *StopInfo      `json:"stop,omitempty"`
}

// HookResponse is what a webhook answers: the outcome keys of a CEL hook,
// with allowed for allow. Allowed is required: a body without it is garbage,
// and garbage fails closed. A key the event does not allow fails closed too.
type HookResponse struct {
	Allowed   *bool          `json:"allowed"`
	Message   string         `json:"message,omitempty"`
	Ask       *bool          `json:"ask,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Input     *string        `json:"input,omitempty"`
	Context   *string        `json:"context,omitempty"`
	Summary   *string        `json:"summary,omitempty"`
	// CustomMessage is {"type":…,"content":…}.
	CustomMessage map[string]any `json:"customMessage,omitempty"`
}

// verdict checks the answer's keys against event's outcomes.
func (r HookResponse) verdict(event vocab.HookEvent) (Verdict, error) {
	m := map[string]any{OutcomeAllow: *r.Allowed}
	if r.Message != "" {
		m[OutcomeMessage] = r.Message
	}
	if r.Ask != nil {
		m[OutcomeAsk] = *r.Ask
	}
	if r.Arguments != nil {
		m[OutcomeArguments] = r.Arguments
	}
	if r.Input != nil {
		m[OutcomeInput] = *r.Input
	}
	if r.Context != nil {
		m[OutcomeContext] = *r.Context
	}
	if r.Summary != nil {
		m[OutcomeSummary] = *r.Summary
	}
	if r.CustomMessage != nil {
		m[OutcomeCustomMessage] = r.CustomMessage
	}
	v, err := verdictFromMap(event, m, "")
	if err != nil {
		return Verdict{}, fmt.Errorf("webhook answer: %w", err)
	}
	return v, nil
}

// webhookHandler calls a hook served over HTTP.
type webhookHandler struct {
	target    outbound.Target
	extension string
	hook      string
	client    outbound.Doer
}

// NewWebhook returns a handler that POSTs a HookReview to target with client
// (nil: a default outbound.Client). The request is bound to the hook's
// timeout through ctx; the client never follows a redirect.
func NewWebhook(target outbound.Target, extension, hook string, client outbound.Doer) Handler {
	if client == nil {
		client = defaultOutbound
	}
	return &webhookHandler{target: target, extension: extension, hook: hook, client: client}
}

// defaultOutbound serves hosts and handlers built without a client.
var defaultOutbound = outbound.New(outbound.Options{})

func (w *webhookHandler) evaluateWithin(ctx context.Context, timeout time.Duration, in Input) (Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return w.Evaluate(ctx, in)
}

// Evaluate sends the review. A non-2xx status, an unreadable body or a missing
// verdict is an error, so a broken webhook fails a before call closed.
func (w *webhookHandler) Evaluate(ctx context.Context, in Input) (Verdict, error) {
	body, err := json.Marshal(HookReview{
		APIVersion: contract.APIVersion, Kind: HookReviewKind,
		Audience:  outbound.Audience{Kind: outbound.AudienceHook, Name: w.hook, URL: w.target.URL},
		Extension: w.extension, Hook: w.hook, Event: in.Event,
		Call: toolCallOf(in), Result: in.Result, Session: &in.Session, Prompt: in.Prompt, Workspace: in.Workspace,
		Cwd: in.Cwd, Params: in.Params, Turn: in.Turn, Model: in.Model, Request: in.Request, Response: in.Response, Stop: in.Stop,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("encode review: %w", err)
	}
	resp, err := w.client.Do(ctx, outbound.Request{
		Method: http.MethodPost, Target: w.target, Body: body,
		Header: http.Header{"Content-Type": {"application/json"}},
	})
	var status *outbound.StatusError
	switch {
	case errors.As(err, &status):
		return Verdict{}, fmt.Errorf("webhook %w", err)
	case err != nil:
		return Verdict{}, err
	}
	if len(resp.Body) > maxWebhookResponse {
		return Verdict{}, fmt.Errorf("webhook answer exceeds the limit of %d bytes", maxWebhookResponse)
	}
	if _, err := jsonlimit.Admit(ctx, resp.Body, maxWebhookValues); err != nil {
		return Verdict{}, fmt.Errorf("webhook answer refused before decoding: it %w", err)
	}
	var out HookResponse
	dec := json.NewDecoder(bytes.NewReader(resp.Body))
	if err := dec.Decode(&out); err != nil {
		return Verdict{}, fmt.Errorf("webhook answered an unreadable body: %w", err)
	}
	if out.Allowed == nil {
		return Verdict{}, errors.New(`webhook answer has no "allowed" field`)
	}
	return out.verdict(in.Event)
}

func toolCallOf(in Input) *ToolCall {
	if !in.Event.IsToolEvent() {
		return nil
	}
	return &in.Call
}

func (w *webhookHandler) describe(h *contract.Hook) {
	h.Webhook = &contract.WebhookHook{URL: w.target.URL, CABundle: w.target.CABundle}
}
