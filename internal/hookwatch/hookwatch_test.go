package hookwatch

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// An MCP session with no hook within the grace is reported once, from when
// it opened; a hook in time, or no MCP session at all (an idle pod), is
// never reported.
func TestWatch_MCPSessionWithoutHooksIsReportedIdleIsNot(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	var reports []time.Time
	w := New(time.Minute, c.now, func(since time.Time) { reports = append(reports, since) })

	// Idle: nothing opened, nothing reported however long.
	c.t = c.t.Add(time.Hour)
	w.Check()
	if len(reports) != 0 {
		t.Fatalf("an idle pod was reported: %v", reports)
	}

	// Governed: the hook follows the session.
	w.MCPSession()
	c.t = c.t.Add(5 * time.Second)
	w.Hooked()
	c.t = c.t.Add(time.Hour)
	w.Check()
	if len(reports) != 0 {
		t.Fatalf("a hooked session was reported: %v", reports)
	}

	// Unhooked: reported from the first session, once.
	first := c.t
	w.MCPSession()
	c.t = c.t.Add(30 * time.Second)
	w.MCPSession()
	w.Check()
	if len(reports) != 0 {
		t.Fatalf("reported within the grace: %v", reports)
	}
	c.t = c.t.Add(30 * time.Second)
	w.Check()
	w.Check()
	if len(reports) != 1 || !reports[0].Equal(first) {
		t.Fatalf("reports %v, want one since %v", reports, first)
	}

	// The next episode is reported again.
	w.MCPSession()
	c.t = c.t.Add(2 * time.Minute)
	w.Check()
	if len(reports) != 2 {
		t.Fatalf("a second unhooked episode: %v", reports)
	}
}
