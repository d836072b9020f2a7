package hostd

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// WarmPath is the prefix of the synthetic tool-call endpoints an agent
// package calls before its session's first real call (POST
// /v1/warm/before, /v1/warm/after), so that its own per-call code and its
// runtime's socket, timer and async paths are compiled by then. In a fresh
// Node process they otherwise were compiled during the session's first
// thousands of calls, about 1.4 ms of the first calls' p99
// (docs/benchmarks.md, "From the very first call").
const WarmPath = "/v1/warm/"

// maxWarmBodyBytes bounds a warm request: it is a synthetic call of a few
// hundred bytes, and warming must never cost hostd what a real call may.
const maxWarmBodyBytes = 16 << 10

// warmRoutes serves the synthetic calls. A warm call is decoded as its real
// counterpart is (the same decoder and checks) and answered in the same
// shape (afterHooks says whether an after hook observes the tool), but it
// decides nothing: no hook runs, no decision or record goes to
// the ledger, no decision metric moves, and hookWatch is not told the agent
// calls its hooks. Its "allowed" answer is no verdict on anything: only the
// agent reads it, and an agent that wanted to skip the gate could skip
// calling hostd at all. The route needs no loaded context, so it also warms
// while hostd waits for its first one.
func (s *Server) warmRoutes(mux *http.ServeMux) {
	mux.Handle("POST "+WarmPath+"{step}", s.instrument("warm", http.HandlerFunc(s.handleWarm)))
}

var errWarmTooLarge = fmt.Errorf("a warm call's body is over %d bytes", maxWarmBodyBytes)

func (s *Server) handleWarm(w http.ResponseWriter, r *http.Request) {
	// The limiter has read the body (Handler); its length is what counts.
	if b, ok := r.Body.(*readBody); r.ContentLength > maxWarmBodyBytes || (ok && len(b.data) > maxWarmBodyBytes) {
		writeError(w, http.StatusRequestEntityTooLarge, errWarmTooLarge)
		return
	}
	step := r.PathValue("step")
	if step != "before" && step != "after" {
		writeError(w, http.StatusNotFound, errors.New("warm calls are before or after"))
		return
	}
	req, err := DecodeCall(r.Body, step == "after")
	if err != nil {
		writeError(w, statusFor(err), err)
		return
	}
	if step == "before" {
		// afterHooks as a real call of the tool would be answered (whether an
		// after hook observes it: a read of the context, no hook run), so the
		// agent's warm calls take its real calls' path, /v1/after or not.
		afterHooks := true
		if snap := s.current.Load(); snap != nil {
			afterHooks = snap.host.Observed(req.Call.Name)
		}
		writeJSON(w, http.StatusOK, BeforeResponse{Allowed: true, AfterHooks: afterHooks})
		return
	}
	writeJSON(w, http.StatusOK, AfterResponse{Diagnostics: []exthost.Diagnostic{}})
}
