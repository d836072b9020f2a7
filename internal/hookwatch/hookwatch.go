// Package hookwatch tells when an agent runs without Loadout's hooks: it
// opened hostd's MCP server, which the agent reads from a file of its own
// (Claude Code's managed-mcp.json), yet called no hook within a grace
// period. Claude Code does exactly that when server-managed settings of its
// organisation displace the managed settings file (docs/security.md,
// "Server-managed settings displace the managed hooks"). An idle pod opens
// no MCP session, so it is never reported; a governed session calls its
// SessionStart hook as it starts, well within the grace.
package hookwatch

import (
	"context"
	"sync"
	"time"
)

// DefaultGrace is how long after an MCP session opens a hook must arrive.
// A governed Claude Code calls SessionStart at its start, seconds apart.
const DefaultGrace = 2 * time.Minute

// Watch pairs MCP sessions with hook calls. Its methods are safe for
// concurrent use and never block on the report.
type Watch struct {
	grace time.Duration
	now   func() time.Time
	// report is told once per unhooked episode: since is when the first
	// MCP session without a hook after it opened.
	report func(since time.Time)

	mu sync.Mutex
	// pending is when the oldest MCP session not followed by a hook
	// opened; zero when none is waiting.
	pending time.Time
}

// New returns a Watch that calls report for each episode. grace <= 0 means
// DefaultGrace; now nil means time.Now.
func New(grace time.Duration, now func() time.Time, report func(since time.Time)) *Watch {
	if grace <= 0 {
		grace = DefaultGrace
	}
	if now == nil {
		now = time.Now
	}
	return &Watch{grace: grace, now: now, report: report}
}

// Grace is how long a session may go without a hook.
func (w *Watch) Grace() time.Duration { return w.grace }

// MCPSession records that an agent opened an MCP session (initialize).
func (w *Watch) MCPSession() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending.IsZero() {
		w.pending = w.now()
	}
}

// Hooked records a hook call: every session waiting so far is hooked.
func (w *Watch) Hooked() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = time.Time{}
}

// Check reports an episode whose grace has passed, once: it then waits for
// the next MCP session.
func (w *Watch) Check() {
	w.mu.Lock()
	since := w.pending
	due := !since.IsZero() && w.now().Sub(since) >= w.grace
	if due {
		w.pending = time.Time{}
	}
	w.mu.Unlock()
	if due {
		w.report(since)
	}
}

// Run checks every quarter of the grace until ctx ends.
func (w *Watch) Run(ctx context.Context) {
	t := time.NewTicker(w.grace / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Check()
		}
	}
}
