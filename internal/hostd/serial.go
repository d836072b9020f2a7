package hostd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
)

// maxSerialWaiting bounds the calls of one serial tool waiting for the
// running one: more are refused at once, so one busy tool cannot hold every
// request slot of hostd.
const maxSerialWaiting = 8

// serialGates run the calls of each serial tool one at a time (rule
// R-TL-3). They belong to the Server, not to a context: a call running
// when a new context is loaded still holds its tool's gate.
type serialGates struct {
	mu    sync.Mutex
	gates map[string]*serialGate
}

type serialGate struct {
	slot    chan struct{}
	waiting int // guarded by serialGates.mu
}

func newSerialGates() *serialGates { return &serialGates{gates: map[string]*serialGate{}} }

// enter waits until no other call of tool runs, at most until ctx ends or
// wait passes, and returns the function that lets the next call in. A
// parallel tool enters at once.
func (g *serialGates) enter(ctx context.Context, tool contract.Tool, wait time.Duration) (func(), error) {
	if tool.ExecutionMode != contract.ExecutionSerial {
		return func() {}, nil
	}
	g.mu.Lock()
	gate := g.gates[tool.Name]
	if gate == nil {
		gate = &serialGate{slot: make(chan struct{}, 1)}
		g.gates[tool.Name] = gate
	}
	if gate.waiting >= maxSerialWaiting {
		g.mu.Unlock()
		return nil, fmt.Errorf("tool %q runs one call at a time and %d calls already wait for it; try again later", tool.Name, maxSerialWaiting)
	}
	gate.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		gate.waiting--
		g.mu.Unlock()
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case gate.slot <- struct{}{}:
		return func() { <-gate.slot }, nil
	case <-timer.C:
		return nil, fmt.Errorf("tool %q runs one call at a time and the running one did not finish within %s", tool.Name, wait)
	case <-ctx.Done():
		return nil, errors.Join(fmt.Errorf("tool %q runs one call at a time: the call ended while it waited for the running one", tool.Name), ctx.Err())
	}
}

// toolTimeout is how long one call of a runnable tool may run: its Service's
// or MCP server's timeout.
func toolTimeout(t contract.Tool) time.Duration {
	var secs int32
	switch {
	case t.Service != nil:
		secs = t.Service.TimeoutSeconds
	case t.MCP != nil:
		secs = t.MCP.TimeoutSeconds
	}
	d := time.Duration(secs) * time.Second
	if d <= 0 {
		return exthost.DefaultToolTimeout
	}
	return min(d, exthost.MaxToolTimeout)
}
