package agentcmd

import (
	"context"
	"time"

	"github.com/loadout-dev/loadout/internal/ledger"
)

// DefaultLedgerAnchorInterval is how long a moved ledger head waits at most
// before hostd signs it (docs/hostd.md, "Decision ledger").
const DefaultLedgerAnchorInterval = 10 * time.Second

// anchorLedger makes led sign its heads: now (the chain's key), every
// ledger.DefaultAnchorEvery records, every interval when the head moved,
// and when the returned function runs at shutdown. The anchors go where
// the records go (hostd's log or --ledger-file, and the OTLP exporter set
// on led before). A nil led (no ledger, no export) anchors nothing.
func anchorLedger(ctx context.Context, led *ledger.Writer, interval time.Duration) (func(), error) {
	if led == nil {
		return func() {}, nil
	}
	if err := led.EnableAnchors(ledger.DefaultAnchorEvery); err != nil {
		return nil, err
	}
	if interval <= 0 {
		interval = DefaultLedgerAnchorInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				led.Checkpoint()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		led.Checkpoint()
	}, nil
}
