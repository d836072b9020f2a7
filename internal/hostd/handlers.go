package hostd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/promtext"
)

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/before", s.instrument("before", s.hooked(s.withContext(s.handleBefore))))
	mux.Handle("POST /v1/after", s.instrument("after", s.hooked(s.withContext(s.handleAfter))))
	mux.Handle("POST /v1/events/{event}", s.instrument("events", s.hooked(s.withContext(s.handleEvent))))
	mux.Handle("POST /v1/render", s.instrument("render", s.withContext(s.handleRender)))
	mux.Handle("POST /v1/activate", s.instrument("activate", s.withContext(s.handleActivate)))
	mux.Handle("POST /v1/tools/{name}", s.instrument("tools", s.withContext(s.handleTool)))
	mux.Handle("POST "+ClaudeCodeHookPath, s.instrument("hooks_claude_code", s.hooked(http.HandlerFunc(s.handleClaudeCodeHook))))
	mux.Handle(MCPPath, s.instrument("mcp", s.mcpHandler()))
	mux.Handle("GET /v1/registry", s.instrument("registry", s.withContext(s.handleRegistry)))
	mux.Handle("GET /v1/results/{id}", s.instrument("results", http.HandlerFunc(s.handleKeptResult)))
	s.probeRoutes(mux)
	s.warmRoutes(mux)
	return mux
}

// snapshotHandler serves one request against one loaded context.
type snapshotHandler func(w http.ResponseWriter, r *http.Request, snap *snapshot)

// withContext pins the current context for the whole request: a reload in
// the middle cannot mix two contexts in one answer.
func (s *Server) withContext(h snapshotHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap := s.current.Load()
		if snap == nil {
			writeError(w, http.StatusServiceUnavailable, errors.New("no context loaded yet"))
			return
		}
		if err := s.policyRefused(); err != nil {
			s.denyStale(w, r, err)
			return
		}
		h(w, r, snap)
	}
}

// denyStale answers a request while the served context's platform policy is
// stale (Options.PolicyDir): a tool call is blocked and an event stopped,
// with the reason; anything else is unavailable, with the reason.
func (s *Server) denyStale(w http.ResponseWriter, r *http.Request, err error) {
	switch r.Pattern {
	case "POST /v1/before":
		req, derr := DecodeCall(r.Body, false)
		if derr != nil {
			writeError(w, statusFor(derr), derr)
			return
		}
		s.metrics.decisions.WithLabelValues("blocked").Inc()
		s.recordStale("before", vocab.BeforeToolCall, req.Call)
		writeJSON(w, http.StatusOK, BeforeResponse{Allowed: false,
			Result: ptrTo(exthost.BlockedResult(req.Call, err.Error(), map[string]any{"reason": ReasonStalePolicy}))})
	case "POST /v1/events/{event}":
		s.recordStale("events", vocab.HookEvent(r.PathValue("event")), exthost.ToolCall{})
		writeJSON(w, http.StatusOK, EventResponse{Allowed: false, Message: err.Error()})
	case "POST /v1/tools/{name}":
		req, derr := decodeToolRequest(r.Body)
		if derr != nil {
			writeError(w, statusFor(derr), derr)
			return
		}
		req.Call.Name = r.PathValue("name")
		s.metrics.toolRuns.WithLabelValues("denied").Inc()
		s.recordStale("tools", vocab.BeforeToolCall, req.Call)
		writeJSON(w, http.StatusOK, ToolRunResponse{Call: req.Call, Result: exthost.BlockedResult(req.Call, err.Error(), map[string]any{"reason": ReasonStalePolicy})})
	default:
		writeError(w, http.StatusServiceUnavailable, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

func (s *Server) handleBefore(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	req, err := DecodeCall(r.Body, false)
	if err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	ctx, trace := s.traced(req.runtime(r.Context()))
	d := snap.host.Decide(ctx, req.Call)
	apv := s.decideAsk(r.Context(), snap, req.Call, &d, req.Headless)
	if !req.AcceptArguments {
		// The agent cannot run the call the asking hook saw: the ask is
		// a deny for it.
		d = exthost.RefuseRewrite(req.Call, d)
	}
	s.recordCall(snap, "before", req.Call, &d, false, runsOf(trace), apv)
	s.metrics.observeDiagnostics(d.Diagnostics)
	resp := BeforeResponse{Allowed: d.Blocked == nil, AfterHooks: d.Blocked == nil && snap.host.Observed(req.Call.Name), Ask: d.Asks(), Result: d.Blocked, Diagnostics: d.Diagnostics}
	if d.Rewritten {
		resp.Arguments = d.Call.Arguments
	}
	if d.Blocked == nil {
		s.metrics.decisions.WithLabelValues("allowed").Inc()
	} else {
		s.metrics.decisions.WithLabelValues("blocked").Inc()
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleEvent runs the hooks of a session event (docs/hooks.md). Tool events
// have their own routes, which pair results with the call.
func (s *Server) handleEvent(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	var req EventRequest
	if err := decode(r.Body, &req); err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	event := vocab.HookEvent(r.PathValue("event"))
	if (event == vocab.UserInput || event == vocab.BeforeAgentStart) && req.Prompt == nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%s needs prompt.text", event))
		return
	}
	ereq := exthost.EventRequest{Event: event, Session: req.Session, Prompt: req.Prompt, Cwd: req.Cwd,
		Turn: req.Turn, Model: req.Model, Request: req.Request, Response: req.Response, Stop: req.Stop}
	ctx, trace := s.traced(r.Context())
	out, err := snap.host.Event(ctx, ereq)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	s.recordEvent(snap, "events", ereq, out, runsOf(trace))
	s.metrics.observeDiagnostics(out.Diagnostics)
	if req.ProjectContext && event == vocab.SessionStart && out.Allowed {
		out.Context = claudecode.JoinContext(snap.projectContext(), out.Context)
	}
	writeJSON(w, http.StatusOK, EventResponse{
		Allowed: out.Allowed, Ask: out.Ask, Message: out.Message, Extension: out.Extension, Hook: out.Hook,
		Input: out.Input, Context: out.Context, Diagnostics: out.Diagnostics, Summary: out.Summary, Messages: out.Messages,
	})
}

func (s *Server) handleAfter(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	req, err := DecodeCall(r.Body, true)
	if err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	ctx, trace := s.traced(req.runtime(r.Context()))
	diags := snap.host.After(ctx, req.Call, *req.Result)
	s.metrics.observeDiagnostics(diags)
	s.recordAfter(snap, "after", req.Call, runsOf(trace))
	if diags == nil {
		diags = []exthost.Diagnostic{}
	}
	writeJSON(w, http.StatusOK, AfterResponse{Diagnostics: diags})
}

func (s *Server) handleRender(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	var req RenderRequest
	if err := decode(r.Body, &req); err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	msg, err := snap.context.Render(req.Template, req.Args, s.opts.Now())
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

func (s *Server) handleActivate(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	var req ActivateRequest
	if err := decode(r.Body, &req); err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	skill, err := snap.context.Activate(req.Skill, req.Files)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)
		return
	}
	writeJSON(w, http.StatusOK, skill)
}

// RegistryResponse is the served registry with the hash of its context.
type RegistryResponse struct {
	Hash string `json:"hash"`
	contract.Registry
}

func (s *Server) handleRegistry(w http.ResponseWriter, _ *http.Request, snap *snapshot) {
	writeJSON(w, http.StatusOK, RegistryResponse{Hash: snap.hash, Registry: snap.host.Registry()})
}

// handleReady is ready while the newest context is served and, with
// --materialize, the tree holds it. The newest update failing to load or
// refused (unsigned, signed for another Workspace, ...) makes it answer 503
// naming why, while the last good context keeps serving its policy: an agent
// is never left running on a policy the platform has replaced with nothing
// red to show for it. External
// skills not at their pinned version yet are listed with a short reason;
// they leave hostd ready, since their policy already applies. Nothing here
// quotes a remote answer: the probe listener is unauthenticated.
func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	snap, r := s.status()
	if err := s.policyRefused(); err != nil && snap != nil {
		// The served context is not served: its platform policy is stale.
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"hash": snap.hash, "reason": ReasonStalePolicy,
			"error": "every tool call and event is denied: " + err.Error()})
		return
	}
	if snap == nil || !r.published {
		msg := "no context loaded"
		if snap != nil {
			msg = "the first context is still being served (MCP tools, tree)"
		}
		if r.loadErr != nil {
			msg += ": " + r.loadErr.Error()
		}
		writeError(w, http.StatusServiceUnavailable, errors.New(msg))
		return
	}
	body := map[string]any{"hash": snap.hash}
	if r.loadErr != nil {
		body["lastReloadError"] = r.loadErr.Error()
		body["error"] = "the newest context was refused, the last good one (" + snap.hash +
			") still serves: " + r.loadErr.Error()
	}
	if len(r.sources) > 0 {
		body["skillSources"] = r.sources
		failing := 0
		for _, st := range r.sources {
			if st.State == "failing" {
				failing++
			}
		}
		body["failingSkillSources"] = fmt.Sprint(failing)
	}
	if r.treeErr != nil {
		body["treeError"] = "the materialized tree does not hold the served context (its policy applies): " + r.treeErr.Error()
		if r.loadErr == nil {
			body["error"] = body["treeError"]
		}
	}
	if r.loadErr != nil || r.treeErr != nil {
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// hooked marks a hook endpoint: each request tells hookWatch the agent
// calls its hooks.
func (s *Server) hooked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hookWatch.Hooked()
		h.ServeHTTP(w, r)
	})
}

// instrument counts and times requests per endpoint (promtext: the status
// code label as promhttp made it, and a response writer that keeps the
// Flusher MCP's streamable transport needs).
func (s *Server) instrument(endpoint string, h http.Handler) http.Handler {
	return promtext.InstrumentHandler(s.metrics.requests, s.metrics.duration, endpoint, h)
}

func statusFor(err error) int {
	if errors.Is(err, errTooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, ErrorResponse{Error: err.Error()})
}
