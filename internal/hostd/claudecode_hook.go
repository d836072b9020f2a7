package hostd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// ClaudeCodeHookPath is where hostd answers Claude Code's http hooks: Claude
// Code POSTs the hook input and reads the hook output from the answer, so no
// process starts per call. The answer is the command hook's
// (`loadout hook claude-code`), from the same decision function.
const ClaudeCodeHookPath = "/v1/hooks/claude-code"

// snapshotPolicy is the Workspace's policy as one loaded context answers it,
// counted in the same metrics as /v1/before and /v1/after.
type snapshotPolicy struct {
	s    *Server
	snap *snapshot
	// headless: Claude Code runs without a user to ask (-p); its hook URL
	// says so with headless=true.
	headless bool
}

func (p snapshotPolicy) Before(ctx context.Context, call exthost.ToolCall) (claudecode.BeforeVerdict, error) {
	if p.snap == nil {
		return claudecode.BeforeVerdict{}, errors.New("hostd has no context loaded yet")
	}
	tctx, trace := p.s.traced(ctx)
	d := p.snap.host.Decide(tctx, call)
	apv := p.s.decideAsk(ctx, p.snap, call, &d, p.headless)
	p.s.metrics.observeDiagnostics(d.Diagnostics)
	p.s.recordCall(p.snap, "claude-code", call, &d, false, runsOf(trace), apv)
	if d.Blocked == nil {
		p.s.metrics.decisions.WithLabelValues("allowed").Inc()
	} else {
		p.s.metrics.decisions.WithLabelValues("blocked").Inc()
	}
	v := claudecode.BeforeVerdict{Blocked: d.Blocked, Ask: d.Asks()}
	if d.Rewritten {
		v.Arguments = d.Call.Arguments
	}
	return v, nil
}

func (p snapshotPolicy) Event(ctx context.Context, req exthost.EventRequest) (exthost.EventOutcome, error) {
	if p.snap == nil {
		return exthost.EventOutcome{}, errors.New("hostd has no context loaded yet")
	}
	tctx, trace := p.s.traced(ctx)
	out, err := p.snap.host.Event(tctx, req)
	p.s.metrics.observeDiagnostics(out.Diagnostics)
	if err == nil {
		p.s.recordEvent(p.snap, "claude-code", req, out, runsOf(trace))
	}
	if err == nil && req.Event == vocab.SessionStart && out.Allowed {
		// Claude Code's managed memory holds only the platform's text; the
		// tenants' comes in as the session's context (docs/agents.md).
		out.Context = claudecode.JoinContext(p.snap.projectContext(), out.Context)
	}
	return out, err
}

func (p snapshotPolicy) After(ctx context.Context, call exthost.ToolCall, result exthost.ToolResult) ([]exthost.Diagnostic, error) {
	if p.snap == nil {
		return nil, errors.New("hostd has no context loaded yet")
	}
	tctx, trace := p.s.traced(ctx)
	diags := p.snap.host.After(tctx, call, result)
	p.s.metrics.observeDiagnostics(diags)
	p.s.recordAfter(p.snap, "claude-code", call, runsOf(trace))
	return diags, nil
}

// handleClaudeCodeHook answers one Claude Code http hook. It always answers
// 200 with a hook output, a deny when the call cannot be decided: Claude Code
// treats a non-2xx answer as a hook failure, which lets the call run unless
// the hook says onFailure "block". The query configures what the command
// hook's flags do: mcpServer (default loadout) and autoAllow.
func (s *Server) handleClaudeCodeHook(w http.ResponseWriter, r *http.Request) {
	policy := snapshotPolicy{s: s, snap: s.current.Load()}
	h := claudecode.Hook{MCPServer: "loadout", Policy: policy}
	in, err := claudecode.ReadInput(r.Body)
	if err != nil {
		writeJSON(w, http.StatusOK, claudecode.Block("Loadout could not read the hook input ("+err.Error()+"); the call is blocked", in.HookEventName))
		return
	}
	if err := s.policyRefused(); err != nil {
		s.metrics.decisions.WithLabelValues("blocked").Inc()
		event := vocab.HookEvent(in.HookEventName) // Claude Code's name for a session event
		if in.ToolName != "" {
			event = vocab.BeforeToolCall
		}
		s.recordStale("claude-code", event, exthost.ToolCall{Name: in.ToolName})
		writeJSON(w, http.StatusOK, claudecode.Block(err.Error(), in.HookEventName))
		return
	}
	q := r.URL.Query()
	if q.Has("mcpServer") {
		h.MCPServer = q.Get("mcpServer")
	}
	autoAllow, err := queryBool(q, "autoAllow")
	if err == nil {
		policy.headless, err = queryBool(q, "headless")
	}
	if err != nil {
		writeJSON(w, http.StatusOK, claudecode.Block(err.Error()+"; the call is blocked", in.HookEventName))
		return
	}
	h.AutoAllow, h.Policy = autoAllow, policy
	writeJSON(w, http.StatusOK, h.Answer(r.Context(), in))
}

// queryBool reads a boolean parameter of the hook URL; absent, it is false.
func queryBool(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("the hook URL's %s=%s is not a boolean", name, strconv.Quote(v))
	}
	return b, nil
}
