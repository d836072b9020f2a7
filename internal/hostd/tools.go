package hostd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/verdict"
)

// runnableTool is a registry tool that hostd runs itself: its input schema,
// compiled once per context, and the core that calls its Service.
type runnableTool struct {
	tool   contract.Tool
	schema *exthost.InputSchema // nil: the tool declares no schema
	core   exthost.CoreFunc
}

// buildTools prepares every runnable tool of the registry. A schema that
// does not compile fails the whole load, like a hook that does not: running
// the tool without its argument check would be failing open.
func (snap *snapshot) buildTools(ws exthost.WorkspaceInfo, client outbound.Doer, headers mcpclient.HeaderSource) error {
	snap.tools = map[string]*runnableTool{}
	upstreams := mcpclient.NewUpstreams(client, headers)
	for _, t := range snap.host.Registry().Tools {
		if !t.Runnable() {
			continue
		}
		rt := &runnableTool{tool: t}
		if len(t.InputSchema) > 0 {
			schema, err := exthost.CompileInputSchema(t.InputSchema)
			if err != nil {
				return fmt.Errorf("tool %q: inputSchema %w", t.Name, err)
			}
			rt.schema = schema
		}
		core, err := toolCore(t, ws, client, upstreams)
		if err != nil {
			return err
		}
		rt.core = core
		snap.tools[t.Name] = rt
		snap.runnable = append(snap.runnable, t)
	}
	return nil
}

// toolCore is the CoreFunc that runs a registry tool: a call to its Service
// (a ToolInvocation) or to its MCP server (tools/call, one session per
// server and context).
func toolCore(t contract.Tool, ws exthost.WorkspaceInfo, client outbound.Doer, upstreams *mcpclient.Upstreams) (exthost.CoreFunc, error) {
	if t.MCP == nil {
		return exthost.ServiceCore(t, ws, client)
	}
	return upstreams.Core(t)
}

// ToolRunResponse is the answer of POST /v1/tools/{name}: the call as run
// (rewritten by hooks, docs/hooks.md),
// its result paired with it (toolCallId, toolName), whether the tool's
// Service was called, and the hooks' diagnostics.
type ToolRunResponse struct {
	Call        exthost.ToolCall     `json:"call"`
	Result      exthost.ToolResult   `json:"result"`
	Executed    bool                 `json:"executed"`
	Diagnostics []exthost.Diagnostic `json:"diagnostics,omitempty"`
}

// errNotRunnable is a call of a tool hostd cannot run: not in the registry,
// or a declaration the agent runs itself.
var errNotRunnable = errors.New("not runnable")

// runTool is the one path of a runnable tool's call, for /v1/tools/{name}
// and MCP tools/call alike: a denied tool is refused; the arguments are
// checked against the input schema; then the executor runs the before hooks
// (any denial or failure blocks), the Service exactly once, and the after
// hooks. A refused, invalid or blocked call never reaches the Service.
func (s *Server) runTool(ctx context.Context, snap *snapshot, call exthost.ToolCall) (ToolRunResponse, error) {
	out := ToolRunResponse{Call: call}
	rt, ok := snap.tools[call.Name]
	switch {
	case snap.host.Denies(call.Name):
		// The executor blocks a denied tool before any hook runs (rule R-EXT-5).
		d := snap.host.Decide(ctx, call)
		out.Result = *d.Blocked
		s.metrics.toolRuns.WithLabelValues("denied").Inc()
		s.recordCall(snap, "tools", call, &d, false, nil, nil)
		return out, nil
	case !ok:
		if slices.ContainsFunc(snap.host.Registry().Tools, func(t contract.Tool) bool { return t.Name == call.Name }) {
			return out, fmt.Errorf("%w: tool %q is a declaration without an implementation: the agent runs it itself (around /v1/before and /v1/after)", errNotRunnable, call.Name)
		}
		return out, fmt.Errorf("%w: tool %q is not in the registry", errNotRunnable, call.Name)
	}
	if rt.schema != nil {
		if err := rt.schema.Validate(call.Arguments); err != nil {
			d := exthost.Decision{Call: call}
			d.Refuse(call, fmt.Sprintf("invalid arguments for tool %q: %s", call.Name, err), verdict.CauseInvalidArguments, map[string]any{"invalidArguments": err.Error()})
			out.Result = *d.Blocked
			s.metrics.toolRuns.WithLabelValues("invalid").Inc()
			s.recordCall(snap, "tools", call, &d, false, nil, nil)
			return out, nil
		}
	}
	// A serial tool waits for its running call before it runs (at most
	// the tool's own timeout).
	core := func(ctx context.Context, c exthost.ToolCall) (exthost.ToolResult, error) {
		release, err := s.serial.enter(ctx, rt.tool, toolTimeout(rt.tool))
		if err != nil {
			return exthost.ToolResult{}, err
		}
		defer release()
		out.Executed = true
		return rt.core(ctx, c)
	}
	// The hooks may rewrite the call: what runs, and what the answer reports
	// as the call, is the rewritten one (re-checked against the schema).
	var d exthost.Decision
	tctx, trace := s.traced(ctx)
	out.Result, d = snap.host.ExecuteDecided(tctx, call, core)
	// Nobody can be asked inside a tool run: an imposed hook's ask may go
	// to the cluster's approvers, and run once approved.
	apv := s.decideAsk(ctx, snap, call, &d, true)
	switch {
	case apv != nil && d.Blocked == nil:
		out.Result, d = snap.host.RunApproved(tctx, d, core)
	case apv != nil:
		out.Result = *d.Blocked
	}
	if out.Executed {
		// The after hooks judged the whole answer; only now is it held to
		// the tool's output limit, and withheld whole if they flagged it.
		out.Result = s.limitOutput(rt.tool, out.Result, d.Flagged, resultOwner(ctx, call))
	}
	out.Call, out.Diagnostics = d.Call, d.Diagnostics
	s.metrics.observeDiagnostics(out.Diagnostics)
	s.recordCall(snap, "tools", call, &d, out.Executed, runsOf(trace), apv)
	switch {
	case !out.Executed:
		s.metrics.toolRuns.WithLabelValues("blocked").Inc()
	case out.Result.IsError:
		s.metrics.toolRuns.WithLabelValues("error").Inc()
	default:
		s.metrics.toolRuns.WithLabelValues("ok").Inc()
	}
	return out, nil
}

// ToolRequest is the body of POST /v1/tools/{name}: the call, whose name is
// the path's (call.name may be omitted; if given it must match).
type ToolRequest struct {
	Call exthost.ToolCall `json:"call"`
	// Session and Cwd are where the call is made, as for /v1/before.
	Session *exthost.SessionInfo `json:"session,omitempty"`
	Cwd     string               `json:"cwd,omitempty"`
}

func (s *Server) handleTool(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	req, err := decodeToolRequest(r.Body)
	if err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	name := r.PathValue("name")
	switch {
	case req.Call.ID == "":
		writeError(w, http.StatusBadRequest, errors.New("call.id is required"))
		return
	case req.Call.Name != "" && req.Call.Name != name:
		writeError(w, http.StatusBadRequest, fmt.Errorf("call.name %q does not match the path's tool %q", req.Call.Name, name))
		return
	}
	req.Call.Name = name
	ctx := CallRequest{Session: req.Session, Cwd: req.Cwd}.runtime(r.Context())
	resp, err := s.runTool(ctx, snap, req.Call)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
